//go:build linux

package epoll

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Poller waits on one or more fds plus its own wake-up eventfd.
type Poller struct {
	epollFd, eventFd int
	fds              []int      // registered for EPOLLIN: what a Readiness watches
	readiness        *Readiness // made by NewReadiness; nil until then
}

// New returns a Poller whose wake-up eventfd is already registered.
func New() (*Poller, error) {
	epollFd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	p := &Poller{epollFd: epollFd, eventFd: -1}
	if p.eventFd, err = newEventfd(); err == nil {
		err = add(epollFd, p.eventFd, unix.EPOLLIN)
	}
	if err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// AddEdgeTriggered registers fd for EPOLLIN, edge-triggered.
func (p *Poller) AddEdgeTriggered(fd int) error {
	if err := add(p.epollFd, fd, unix.EPOLLIN|unix.EPOLLET); err != nil {
		return err
	}
	p.fds = append(p.fds, fd)
	return nil
}

// AddEdgeTriggeredWritable registers fd for EPOLLOUT, edge-triggered (a
// user ring buffer wakes its pollers after a drain freed space).
func (p *Poller) AddEdgeTriggeredWritable(fd int) error {
	return add(p.epollFd, fd, unix.EPOLLOUT|unix.EPOLLET)
}

// NewReadiness makes the Poller's one Readiness, watching the fds
// registered for EPOLLIN; Close closes it.
func (p *Poller) NewReadiness(wake func() (again bool)) (*Readiness, error) {
	if p.readiness != nil {
		return nil, errors.New("epoll: a second Readiness")
	}
	rd, err := newReadiness(p.fds, wake)
	if err != nil {
		return nil, err
	}
	p.readiness = rd
	return rd, nil
}

var noPwait2 atomic.Bool // epoll_pwait2 (Linux 5.11) turned out to be missing

// kernelTimespec is struct __kernel_timespec (fs/eventpoll.c): 64-bit
// fields everywhere, unlike unix.Timespec.
type kernelTimespec struct{ Sec, Nsec int64 }

// Wait blocks until a registered fd is ready, a wake-up is pending, or
// timeout passes (os.ErrDeadlineExceeded; negative: no limit); nil when
// interrupted.
func (p *Poller) Wait(timeout time.Duration) error {
	var events [2]unix.EpollEvent // local: several goroutines may wait at once
	n, err := 0, error(nil)
	pwait2 := timeout >= 0 && !noPwait2.Load()
	if pwait2 {
		// epoll_wait's milliseconds would stretch a 100 µs deadline.
		ts := kernelTimespec{Sec: int64(timeout / time.Second), Nsec: int64(timeout % time.Second)}
		r, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(p.epollFd),
			uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)),
			uintptr(unsafe.Pointer(&ts)), 0, 0)
		n = int(r)
		if errno == unix.ENOSYS {
			noPwait2.Store(true)
			pwait2 = false
		} else if errno != 0 {
			err = fmt.Errorf("epoll_pwait2: %w", errno)
		}
	}
	if !pwait2 {
		if n, err = unix.EpollWait(p.epollFd, events[:], waitMsec(timeout)); err != nil {
			err = fmt.Errorf("epoll_wait: %w", err)
		}
	}
	switch {
	case errors.Is(err, unix.EINTR):
		return nil
	case err == nil && n == 0 && timeout >= 0:
		return os.ErrDeadlineExceeded
	}
	return err
}

// waitMsec is epoll_wait's timeout: rounded up, at most a C int (the
// caller waits again), -1 only for timeout < 0.
func waitMsec(timeout time.Duration) int {
	if timeout < 0 {
		return -1
	}
	msec := timeout / time.Millisecond
	if timeout%time.Millisecond != 0 {
		msec++
	}
	return int(min(msec, math.MaxInt32))
}

// Wake makes every current and future Wait return until Drain is called.
func (p *Poller) Wake() error { return setEventfd(p.eventFd, true) }

// Drain clears pending wake-ups.
func (p *Poller) Drain() error { return setEventfd(p.eventFd, false) }

// Close releases the epoll instance, the eventfd and the Readiness. No Wait
// may be running.
func (p *Poller) Close() error {
	var err error
	if p.readiness != nil {
		err, p.readiness = p.readiness.Close(), nil
	}
	if p.eventFd >= 0 {
		err = errors.Join(err, unix.Close(p.eventFd))
	}
	return errors.Join(err, unix.Close(p.epollFd))
}
