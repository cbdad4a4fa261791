//go:build linux

package ringbuf_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/ringbuf"
)

// ReadinessFD lets an event loop wait for records beside its other
// descriptors: here Go's own poller, through an *os.File, whose
// SyscallConn calls a function each time the descriptor turns readable.
// With unix.EpollWait, add the descriptor to your epoll set instead.
func ExampleReader_ReadinessFD() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	rd, err := ringbuf.NewReader(events)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	fd, err := rd.ReadinessFD()
	if err != nil {
		fmt.Println(err)
		return
	}
	// The descriptor is the Reader's, and a File closes what it holds:
	// give the File a duplicate.
	dup, err := unix.Dup(fd)
	if err != nil {
		fmt.Println(err)
		return
	}
	f := os.NewFile(uintptr(dup), "ringbuf readiness")
	defer f.Close() // before rd.Close: closing the File ends a wait on it
	conn, err := f.SyscallConn()
	if err != nil {
		fmt.Println(err)
		return
	}

	// A deadline already passed: reads never wait, the poller does.
	rd.SetDeadline(time.Now())
	submitted := make(chan error, 1)
	go func() { submitted <- submit(events, 3) }()

	got := 0
	err = conn.Read(func(uintptr) bool {
		// Read all there is, then return false to wait until the
		// descriptor is readable again.
		for {
			_, err := rd.Read()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return got == 3
			}
			if err != nil {
				fmt.Println(err)
				return true
			}
			got++
		}
	})
	if err := errors.Join(err, <-submitted); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got, "records")
}
