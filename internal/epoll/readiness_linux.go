//go:build linux

package epoll

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Readiness is what an outside event loop polls for a reader: an eventfd
// readable while its owner says so (Set), and a watcher, a goroutine in
// Go's poller on an epoll instance of the owner's fds, which calls the
// owner back when the kernel wakes one or a poll is due (PollIn). The
// kernel's fds are not handed out: a perf event's poll takes the wake-up
// it reports (perf_poll, kernel/events/core.c), and a ring buffer's stays
// readable while a claim holds records back (ringbuf_map_poll_kern).
type Readiness struct {
	eventFd  int
	readable bool // the eventfd's count is non-zero; under the owner's lock

	watch   *os.File      // the watcher's epoll instance, in Go's poller
	started chan struct{} // closed once the watcher's wait began
	done    chan struct{} // closed when the watcher returns

	mu      sync.Mutex // orders the watch's deadline between owner and watcher
	pollDue time.Time  // the watch's deadline; zero: none
}

func newReadiness(fds []int, wake func() (again bool)) (*Readiness, error) {
	rd := &Readiness{eventFd: -1, started: make(chan struct{}), done: make(chan struct{})}
	conn, err := rd.open(fds)
	if err != nil {
		return nil, errors.Join(err, rd.Close())
	}
	go rd.run(conn, wake)
	// Not before its wait began: beginning, the wait forgets what Go's
	// poller reported, and that poller's own poll of the instance may
	// have taken a perf event's wake-up (perf_poll), lost with it.
	select {
	case <-rd.started:
	case <-rd.done:
	}
	return rd, nil
}

func (rd *Readiness) open(fds []int) (syscall.RawConn, error) {
	var err error
	if rd.eventFd, err = newEventfd(); err != nil {
		return nil, err
	}
	watchFd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	// Non-blocking, so that os.NewFile puts it in Go's poller.
	if err := unix.SetNonblock(watchFd, true); err != nil {
		unix.Close(watchFd)
		return nil, fmt.Errorf("set O_NONBLOCK: %w", err)
	}
	rd.watch = os.NewFile(uintptr(watchFd), "readiness watch")
	for _, fd := range fds {
		if err := add(watchFd, fd, unix.EPOLLIN|unix.EPOLLET); err != nil {
			return nil, err
		}
	}
	return rd.watch.SyscallConn()
}

// FD returns the eventfd.
func (rd *Readiness) FD() int { return rd.eventFd }

// Set makes the eventfd readable or not; under the owner's lock.
func (rd *Readiness) Set(readable bool) error {
	if rd.readable == readable {
		return nil
	}
	if err := setEventfd(rd.eventFd, readable); err != nil {
		return err
	}
	rd.readable = readable
	return nil
}

// PollIn has the watcher call wake within d even if no fd wakes it,
// unless a poll is due sooner already.
func (rd *Readiness) PollIn(d time.Duration) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	due := time.Now().Add(d)
	if rd.pollDue.IsZero() || due.Before(rd.pollDue) {
		rd.pollDue = due
		rd.watch.SetReadDeadline(due) // an error: the file is closing
	}
}

// run is the watcher, until wake returns false or Close ends its wait.
func (rd *Readiness) run(conn syscall.RawConn, wake func() bool) {
	defer close(rd.done)
	started := rd.started
	for {
		calls := 0
		err := conn.Read(func(fd uintptr) bool {
			if started != nil {
				close(started)
				started = nil
			}
			// Go's poller reports the instance once per wake-up: take the
			// edges queued so far, then wait unless there were some.
			calls++
			return takeEdges(int(fd)) || calls > 1
		})
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			rd.mu.Lock()
			if !rd.pollDue.After(time.Now()) {
				rd.pollDue = time.Time{}
				rd.watch.SetReadDeadline(time.Time{})
			}
			rd.mu.Unlock()
		case err != nil:
			return // closed
		}
		if !wake() {
			return
		}
	}
}

// takeEdges takes the wake-ups queued on epollFd and reports whether
// there were any.
func takeEdges(epollFd int) bool {
	var events [16]unix.EpollEvent
	some := false
	for {
		n, err := unix.EpollWait(epollFd, events[:], 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		some = some || n > 0
		if err != nil || n < len(events) {
			return some
		}
	}
}

// Close stops the watcher, waiting until it has left Go's poller, and
// closes both fds; wake must check that it was not closed.
func (rd *Readiness) Close() error {
	var err error
	if rd.watch != nil {
		err = rd.watch.Close() // ends the watcher's wait
	}
	if rd.eventFd >= 0 {
		err = errors.Join(err, unix.Close(rd.eventFd))
		rd.eventFd = -1
	}
	return err
}

// The syscalls below serve the Poller too.

func add(epollFd, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(epollFd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl add fd %d: %w", fd, err)
	}
	return nil
}

func newEventfd() (int, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, fmt.Errorf("eventfd: %w", err)
	}
	return fd, nil
}

// setEventfd makes eventfd fd readable (set) or not; EAGAIN, no count
// to take or a full one, is no error.
func setEventfd(fd int, set bool) error {
	buf := [8]byte{1}
	var err error
	if set {
		_, err = unix.Write(fd, buf[:])
	} else {
		_, err = unix.Read(fd, buf[:])
	}
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("eventfd: %w", err)
	}
	return nil
}
