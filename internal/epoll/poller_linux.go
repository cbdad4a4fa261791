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
	eventFd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epollFd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	p := &Poller{epollFd: epollFd, eventFd: eventFd}
	if err := p.add(eventFd, unix.EPOLLIN); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// AddEdgeTriggered registers fd for EPOLLIN, edge-triggered.
func (p *Poller) AddEdgeTriggered(fd int) error {
	if err := p.add(fd, unix.EPOLLIN|unix.EPOLLET); err != nil {
		return err
	}
	p.fds = append(p.fds, fd)
	return nil
}

// NewReadiness makes the Poller's Readiness, watching the fds registered
// for EPOLLIN, with wake its owner's call-back; Close closes it.
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

// AddEdgeTriggeredWritable registers fd for EPOLLOUT, edge-triggered (a
// user ring buffer wakes its pollers after a drain freed space).
func (p *Poller) AddEdgeTriggeredWritable(fd int) error {
	return p.add(fd, unix.EPOLLOUT|unix.EPOLLET)
}

func (p *Poller) add(fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(p.epollFd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl add fd %d: %w", fd, err)
	}
	return nil
}

// noPwait2 is set once epoll_pwait2 (Linux 5.11) turns out to be missing.
var noPwait2 atomic.Bool

// kernelTimespec is the kernel's struct __kernel_timespec.
type kernelTimespec struct {
	Sec, Nsec int64
}

// Wait blocks until a registered fd is ready, a wake-up is pending, or
// timeout passes (os.ErrDeadlineExceeded; negative: no limit). An
// interrupted wait returns nil: the caller re-checks its state anyway.
func (p *Poller) Wait(timeout time.Duration) error {
	var events [2]unix.EpollEvent // local: several goroutines may wait at once
	n, err := 0, error(nil)
	pwait2 := timeout >= 0 && !noPwait2.Load()
	if pwait2 {
		// epoll_pwait2 keeps a 100 µs deadline 100 µs. Its timespec has
		// 64-bit fields everywhere (fs/eventpoll.c), unlike unix.Timespec.
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

// waitMsec is epoll_wait's timeout for timeout: rounded up, or the caller
// waits again for the remainder, and at most the C int's largest (a
// longer wait ends early and the caller waits again), never negative (no
// limit) but for timeout < 0.
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
func (p *Poller) Wake() error {
	var one = [8]byte{1}
	if _, err := unix.Write(p.eventFd, one[:]); err != nil && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("eventfd write: %w", err)
	}
	return nil
}

// Drain clears pending wake-ups.
func (p *Poller) Drain() error {
	var buf [8]byte
	if _, err := unix.Read(p.eventFd, buf[:]); err != nil && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("eventfd read: %w", err)
	}
	return nil
}

// Close releases the epoll instance and the eventfd, and the readiness's
// if made. No Wait may be running.
func (p *Poller) Close() error {
	var err error
	if p.readiness != nil {
		err, p.readiness = p.readiness.Close(), nil
	}
	err1 := unix.Close(p.eventFd)
	err2 := unix.Close(p.epollFd)
	return errors.Join(err, err1, err2)
}
