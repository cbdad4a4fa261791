//go:build linux

package epoll

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// readiness is what an outside event loop polls for a reader, made on
// the first call of Poller.Readiness: a second epoll instance holding the
// Poller's own epoll instance and an eventfd, both level-triggered.
//
// The Poller's instance is readable while one of its fds is ready and no
// epoll_wait on it has taken the edge since: polling an epoll instance
// polls its ready fds again and drops those no longer ready
// (__ep_eventpoll_poll, fs/eventpoll.c, Linux 6.18), so a ring buffer
// whose records are read stops counting at once. The eventfd says what
// no fd of the reader says: a flush waits for the next read, the reader
// is closed, or records wait whose wake-up a Wait took
// (Waiter.syncReadiness).
type readiness struct {
	epollFd, eventFd int
	pollTakesEdge    bool // TakeEdges has edges to take
	signalled        bool // the eventfd holds a count: waiterSays || recordsLeft
	waiterSays       bool // SignalReadiness
	recordsLeft      bool // SetRecordsLeft
}

// Readiness returns the descriptor of the Poller's readiness, making it
// on the first call: readable while a registered fd is ready or
// SignalReadiness(true) holds. It is non-blocking, so that os.NewFile
// makes a pollable File of it (or of a duplicate), and closed by Close.
// pollTakesEdge says that polling a registered fd consumes the wake-up it
// reports (TakeEdges).
func (p *Poller) Readiness(pollTakesEdge bool) (int, error) {
	if p.readiness != nil {
		return p.readiness.epollFd, nil
	}
	epollFd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("epoll_create1: %w", err)
	}
	rd := &readiness{epollFd: epollFd, eventFd: -1, pollTakesEdge: pollTakesEdge}
	if rd.eventFd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		err = fmt.Errorf("eventfd: %w", err)
	}
	for _, fd := range []int{p.epollFd, rd.eventFd} {
		if err == nil {
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
			if err = unix.EpollCtl(epollFd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
				err = fmt.Errorf("epoll_ctl add fd %d: %w", fd, err)
			}
		}
	}
	if err == nil {
		// The epoll fd's file status flags: epoll ignores them, os.NewFile
		// looks for O_NONBLOCK.
		if err = unix.SetNonblock(epollFd, true); err != nil {
			err = fmt.Errorf("set O_NONBLOCK: %w", err)
		}
	}
	if err != nil {
		return -1, errors.Join(err, rd.close())
	}
	p.readiness = rd
	return epollFd, nil
}

// HasReadiness reports whether Readiness made one.
func (p *Poller) HasReadiness() bool { return p.readiness != nil }

// SignalReadiness makes the readiness readable (on) or not through its
// eventfd, for the Waiter's reasons (closed, flushed).
func (p *Poller) SignalReadiness(on bool) error {
	if p.readiness == nil {
		return nil
	}
	p.readiness.waiterSays = on
	return p.readiness.apply()
}

// SetRecordsLeft makes the readiness readable while records wait whose
// wake-up a Wait took, which the registered fds may not show again.
func (p *Poller) SetRecordsLeft(left bool) error {
	if p.readiness == nil {
		return nil
	}
	p.readiness.recordsLeft = left
	return p.readiness.apply()
}

// apply writes or drains the eventfd, with a syscall only when it changes.
func (rd *readiness) apply() error {
	on := rd.waiterSays || rd.recordsLeft
	if rd.signalled == on {
		return nil
	}
	var buf = [8]byte{1}
	var err error
	if on {
		_, err = unix.Write(rd.eventFd, buf[:])
	} else {
		_, err = unix.Read(rd.eventFd, buf[:])
	}
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("readiness eventfd: %w", err)
	}
	rd.signalled = on
	return nil
}

// TakeEdges takes the edges pending on the registered fds without
// waiting, as a Wait that returns at once would, if their poll consumes
// what it reports (a perf event's wake-up, perf_poll in
// kernel/events/core.c; Readiness's pollTakesEdge): so that one reported
// before its records were read leaves the readiness. The caller looks at
// the buffers afterwards.
func (p *Poller) TakeEdges() error {
	if p.readiness == nil || !p.readiness.pollTakesEdge {
		return nil
	}
	var events [16]unix.EpollEvent
	for {
		n, err := unix.EpollWait(p.epollFd, events[:], 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		if n < len(events) {
			return nil
		}
	}
}

func (rd *readiness) close() error {
	var err error
	if rd.eventFd >= 0 {
		err = unix.Close(rd.eventFd)
	}
	return errors.Join(err, unix.Close(rd.epollFd))
}
