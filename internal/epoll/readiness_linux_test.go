//go:build linux

package epoll

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func readable(t *testing.T, fd int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0 && fds[0].Revents&unix.POLLIN != 0
}

// TestReadinessFollowsRegisteredFds: the readiness is readable while a
// fd registered edge-triggered in the Poller is ready, however often it
// is polled, and not once it is not; made once.
func TestReadinessFollowsRegisteredFds(t *testing.T) {
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	source, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(source)
	if err := p.AddEdgeTriggered(source); err != nil {
		t.Fatal(err)
	}
	fd, err := p.Readiness(false)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := p.Readiness(false); again != fd || err != nil {
		t.Fatalf("Readiness again: %d, %v; want %d", again, err, fd)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK == 0 {
		t.Fatalf("readiness fd flags %#x, %v: want O_NONBLOCK, for os.NewFile", flags, err)
	}
	if readable(t, fd) {
		t.Fatal("readable with nothing ready")
	}
	one := [8]byte{1}
	if _, err := unix.Write(source, one[:]); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if !readable(t, fd) {
			t.Fatal("not readable with a registered fd ready")
		}
	}
	if _, err := unix.Read(source, one[:]); err != nil {
		t.Fatal(err)
	}
	if readable(t, fd) {
		t.Fatal("readable once the registered fd is not ready")
	}
	if err := p.SignalReadiness(true); err != nil {
		t.Fatal(err)
	}
	if !readable(t, fd) {
		t.Fatal("not readable when signalled")
	}
	if err := p.SignalReadiness(false); err != nil {
		t.Fatal(err)
	}
	if readable(t, fd) {
		t.Fatal("readable once the signal is off")
	}
}

// TestReadinessSaysFlushAndClose: the descriptor is readable while a
// read that finds nothing would end with the flush at once, or after
// Close; a flush that reads in progress take shows nowhere else.
func TestReadinessSaysFlushAndClose(t *testing.T) {
	w, mu := newTestWaiter(t)
	mu.Lock()
	defer mu.Unlock()
	fd, err := w.ReadinessFD(false)
	if err != nil {
		t.Fatal(err)
	}
	want := func(readableNow bool, what string) {
		t.Helper()
		if got := readable(t, fd); got != readableNow {
			t.Fatalf("%s: readable %v, want %v", what, got, readableNow)
		}
	}
	want(false, "idle")
	w.Flush()
	want(true, "after Flush with no read in progress")
	var a, b Ticket
	w.Begin(&a)
	if _, err := w.Check(&a); err != errFlushed {
		t.Fatalf("the read after Flush: %v", err)
	}
	want(false, "once a read took the flush")
	w.End(&a)

	w.Begin(&a)
	w.Flush()
	want(false, "after Flush with a read in progress, whose it is")
	w.End(&a) // it found records: the flush goes to the next read
	want(true, "after the read that Flush covered ended with records")
	w.Begin(&b)
	if _, err := w.Check(&b); err != errFlushed {
		t.Fatalf("the read after a flushed one that found records: %v", err)
	}
	want(false, "once the next read took the flush")
	w.End(&b)

	w.Close()
	want(true, "after Close")
	if fd, err := w.ReadinessFD(false); fd != -1 || !errors.Is(err, os.ErrClosed) {
		t.Fatalf("ReadinessFD after Close: %d, %v", fd, err)
	}
}
