//go:build linux

package epoll

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Readiness is what an outside event loop polls for a reader: an eventfd
// readable while its owner says so (Set), and a watcher, a goroutine
// blocked in epoll_wait on an instance of the owner's fds, which calls the
// owner back when the kernel wakes one or a poll is due (PollIn). The
// kernel's fds are not handed out (perf_poll takes the wake-up it reports;
// a ring buffer stays readable while a claim holds records back,
// ringbuf_map_poll_kern), nor is the watcher Go's poller, which would take
// and forget a perf wake-up (docs/architecture.md).
type Readiness struct {
	eventFd  int
	readable bool // the eventfd's count is non-zero; under the owner's lock

	watchFd int // the watcher's epoll instance: the owner's fds and kickFd
	kickFd  int // an eventfd that ends the watcher's wait (PollIn, Close)

	mu      sync.Mutex
	pollDue time.Time     // the watcher's deadline; zero: none
	waiting bool          // the watcher is in epoll_wait, or about to be
	closing bool          // Close was called: the watcher must not wait again
	left    chan struct{} // closed by the watcher once it saw closing
	done    chan struct{} // closed when the watcher returns
}

func newReadiness(fds []int, wake func() (again bool)) (*Readiness, error) {
	rd := &Readiness{eventFd: -1, watchFd: -1, kickFd: -1, left: make(chan struct{}), done: make(chan struct{})}
	if err := rd.open(fds); err != nil {
		rd.closing = true
		return nil, errors.Join(err, rd.closeFds())
	}
	go rd.run(wake)
	return rd, nil
}

func (rd *Readiness) open(fds []int) error {
	var err error
	if rd.eventFd, err = newEventfd(); err != nil {
		return err
	}
	if rd.kickFd, err = newEventfd(); err != nil {
		return err
	}
	if rd.watchFd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	for _, fd := range append([]int{rd.kickFd}, fds...) {
		if err := add(rd.watchFd, fd, unix.EPOLLIN|unix.EPOLLET); err != nil {
			return err
		}
	}
	return nil
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

// PollIn has the watcher call wake within d even if no fd wakes it, unless
// a poll is due sooner already.
func (rd *Readiness) PollIn(d time.Duration) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	due := time.Now().Add(d)
	if rd.closing || !rd.pollDue.IsZero() && !due.Before(rd.pollDue) {
		return
	}
	rd.pollDue = due
	if rd.waiting {
		setEventfd(rd.kickFd, true) // an error: as a lost wake-up, which the next operation mends
	}
}

// run is the watcher, until wake returns false or Close ends its wait.
func (rd *Readiness) run(wake func() bool) {
	defer close(rd.done)
	var events [16]unix.EpollEvent
	for {
		rd.mu.Lock()
		if rd.closing {
			rd.mu.Unlock()
			return
		}
		timeout := -1
		if !rd.pollDue.IsZero() {
			// Rounded up: a wait that ends before the poll is due waits again.
			timeout = max(0, int((time.Until(rd.pollDue)+time.Millisecond-1)/time.Millisecond))
		}
		rd.waiting = true
		rd.mu.Unlock()

		_, err := unix.EpollWait(rd.watchFd, events[:], timeout)

		rd.mu.Lock()
		rd.waiting = false
		if rd.closing {
			close(rd.left)
			rd.mu.Unlock()
			return
		}
		setEventfd(rd.kickFd, false) // a kick is heard once
		due := !rd.pollDue.IsZero() && !rd.pollDue.After(time.Now())
		if due {
			rd.pollDue = time.Time{}
		}
		rd.mu.Unlock()
		if err != nil && !errors.Is(err, unix.EINTR) {
			return // the instance is gone: nothing can wake the watcher
		}
		if !wake() {
			return
		}
	}
}

// Close stops the watcher and closes the fds; it waits for the watcher only
// to leave epoll_wait, never for its call to the owner, which may call
// Close under the lock wake takes.
func (rd *Readiness) Close() error {
	rd.mu.Lock()
	rd.closing = true
	waiting := rd.waiting
	if waiting {
		setEventfd(rd.kickFd, true)
	}
	rd.mu.Unlock()
	if waiting {
		<-rd.left
	}
	return rd.closeFds()
}

func (rd *Readiness) closeFds() error {
	var err error
	for _, fd := range []*int{&rd.watchFd, &rd.kickFd, &rd.eventFd} {
		if *fd >= 0 {
			err = errors.Join(err, unix.Close(*fd))
			*fd = -1
		}
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

// setEventfd makes eventfd fd readable (set) or not; EAGAIN (no count, or a
// full one) is no error.
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
