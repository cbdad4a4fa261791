//go:build linux

package bpftest

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ReadinessTarget is a reader under CheckReadiness, with a producer of
// its records.
type ReadinessTarget struct {
	ReadinessFD func() (int, error)
	// Produce makes n records, each waking a waiting reader.
	Produce func(n int)
	// Drain reads with a deadline already passed, by Read (loop false) or
	// a Records loop, until a read fails, and returns how many records it
	// read and the error (nil if a loop ends without one).
	Drain func(loop bool) (int, error)
	// ReadOne reads one record, waiting as long as it takes.
	ReadOne func() error
	// Hold runs a Records loop whose body, given a record, waits until
	// release is called; release returns once the loop has ended.
	Hold         func() (release func())
	Flush, Close func() error
	Flushed      error     // the reader's ErrFlushed
	Before       Resources // taken just before the reader was made
}

// CheckReadiness checks a reader's ReadinessFD from an outside epoll set,
// as an event loop polls it: on a fresh target each, that it is not
// readable idle, readable once records are produced and not once they
// are read (whether polled first or not), readable after Flush until a
// read returns the flush, that a poller blocked on it is woken by a
// record and burns no CPU meanwhile, that records a read waiting in the
// reader leaves are announced, that an edge-triggered event loop
// reads every record of a producer that runs while it drains, and that
// Close leaves it readable
// while a loop body still uses the reader, then closes it with the rest.
func CheckReadiness(t *testing.T, newTarget func(t *testing.T) ReadinessTarget) {
	t.Helper()
	open := func(t *testing.T, r ReadinessTarget) *readinessPoller {
		t.Helper()
		fd, err := r.ReadinessFD()
		if err != nil {
			t.Fatal(err)
		}
		if again, err := r.ReadinessFD(); again != fd || err != nil {
			t.Fatalf("ReadinessFD again: %d, %v; want %d, nil", again, err, fd)
		}
		return newReadinessPoller(t, fd, 0)
	}
	drain := func(t *testing.T, r ReadinessTarget, loop bool, want int, wantErr error) {
		t.Helper()
		n, err := r.Drain(loop)
		if n != want || !errors.Is(err, wantErr) {
			t.Fatalf("drain (loop %v): %d records, %v; want %d, %v", loop, n, err, want, wantErr)
		}
	}
	t.Run("EveryWakeUp", func(t *testing.T) {
		// One record at a time, each read as soon as it is announced: the
		// next is produced while the reader may still be answering the
		// last one's wake-up, which must not swallow the next (a perf
		// event's poll takes the wake-up it reports).
		r := newTarget(t)
		p := open(t, r)
		for i := range 300 {
			r.Produce(1)
			p.check(t, 5*time.Second, true, fmt.Sprintf("record %d", i))
			drain(t, r, i%2 == 1, 1, os.ErrDeadlineExceeded)
		}
	})
	t.Run("Records", func(t *testing.T) {
		r := newTarget(t)
		p := open(t, r)
		for _, loop := range []bool{false, true} {
			p.check(t, 0, false, "idle")
			r.Produce(3)
			p.check(t, 5*time.Second, true, "with 3 records")
			drain(t, r, loop, 3, os.ErrDeadlineExceeded)
			p.check(t, 0, false, "with every record read")
		}
		// Read before anything polled the descriptor: no wake-up is left
		// for records already read.
		r.Produce(3)
		drain(t, r, false, 3, os.ErrDeadlineExceeded)
		p.check(t, 0, false, "with every record read before it was polled")
	})
	t.Run("Flush", func(t *testing.T) {
		r := newTarget(t)
		p := open(t, r)
		for _, records := range []int{0, 2} {
			r.Produce(records)
			drain(t, r, false, records, os.ErrDeadlineExceeded)
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			r.Produce(records)
			p.check(t, 0, true, "after Flush")
			p.check(t, 0, true, "after Flush, polled again")
			drain(t, r, records > 0, records, r.Flushed)
			p.check(t, 0, false, "once a read returned the flush")
		}
	})
	t.Run("WakesBlockedPoller", func(t *testing.T) {
		r := newTarget(t)
		p := open(t, r)
		woken := make(chan error, 1)
		go func() { woken <- p.wait(-1) }()
		StillWaiting(t, woken, 100*time.Millisecond, "a poller of an idle reader")
		CheckIdleCPU(t, "a poller blocked on the readiness descriptor")
		StillWaiting(t, woken, 0, "a poller of an idle reader, while CPU was measured,")
		r.Produce(1)
		if err := Receive(t, woken, 5*time.Second, "a poller, after a record,"); err != nil {
			t.Fatal(err)
		}
		drain(t, r, false, 1, os.ErrDeadlineExceeded)
		p.check(t, 0, false, "with the record read")
	})
	t.Run("BesideAWaitingRead", func(t *testing.T) {
		r := newTarget(t)
		p := open(t, r)
		for range 2 {
			done := make(chan error, 1)
			go func() { done <- r.ReadOne() }()
			StillWaiting(t, done, 50*time.Millisecond, "a read of an idle reader")
			r.Produce(3)
			if err := Receive(t, done, 5*time.Second, "a read, after records,"); err != nil {
				t.Fatal(err)
			}
			// The read took the kernel's wake-up: the records it left are
			// announced all the same.
			p.check(t, 5*time.Second, true, "with 2 records left by a read that waited")
			drain(t, r, false, 2, os.ErrDeadlineExceeded)
			p.check(t, 0, false, "with every record read")
		}
	})
	t.Run("NoWakeUpLost", func(t *testing.T) {
		r := newTarget(t)
		fd, err := r.ReadinessFD()
		if err != nil {
			t.Fatal(err)
		}
		// Edge-triggered, as Go's poller holds a descriptor: a wake-up
		// that the reader lets pass is never reported again.
		p := newReadinessPoller(t, fd, unix.EPOLLET)
		var read atomic.Int64
		stop, stopped := make(chan struct{}), make(chan error, 1)
		go func() {
			for loop := false; ; loop = !loop {
				select {
				case <-stop:
					stopped <- nil
					return
				default:
				}
				if err := p.wait(100 * time.Millisecond); errors.Is(err, os.ErrDeadlineExceeded) {
					continue // no drain without a wake-up
				} else if err != nil {
					stopped <- err
					return
				}
				n, err := r.Drain(loop)
				read.Add(int64(n))
				if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
					stopped <- err
					return
				}
			}
		}()
		produced := 0
		for i := range 300 {
			r.Produce(1 + i%4)
			produced += 1 + i%4
			time.Sleep(time.Duration(i%5) * 50 * time.Microsecond)
		}
		for giveUp := time.Now().Add(5 * time.Second); read.Load() < int64(produced); time.Sleep(time.Millisecond) {
			if time.Now().After(giveUp) {
				break
			}
		}
		close(stop)
		if err := Receive(t, stopped, 5*time.Second, "the event loop"); err != nil {
			t.Fatal(err)
		}
		if got := read.Load(); got != int64(produced) {
			t.Fatalf("the event loop read %d records of %d: a wake-up was lost", got, produced)
		}
	})
	t.Run("Close", func(t *testing.T) {
		r := newTarget(t)
		before := r.Before
		p := open(t, r)
		CheckOpened(t, before, "a reader with its readiness descriptor")
		r.Produce(1)
		release := r.Hold()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		p.check(t, 0, true, "closed, with a loop body still running")
		if fd, err := r.ReadinessFD(); fd != -1 || !errors.Is(err, os.ErrClosed) {
			t.Fatalf("ReadinessFD after Close: %d, %v; want -1, ErrClosed", fd, err)
		}
		release()
		// The descriptor is closed: the outside set dropped it.
		p.check(t, 0, false, "closed, once the loop ended")
		p.close(t)
		CheckNoLeaks(t, before, "a closed reader with its readiness descriptor")
	})
}

// readinessPoller is an outside event loop's epoll set holding a readiness
// descriptor, level-triggered but for flags (unix.EPOLLET).
type readinessPoller struct {
	epollFd int
}

func newReadinessPoller(t *testing.T, fd int, flags uint32) *readinessPoller {
	t.Helper()
	epollFd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	p := &readinessPoller{epollFd: epollFd}
	t.Cleanup(func() { p.close(t) })
	ev := unix.EpollEvent{Events: unix.EPOLLIN | flags, Fd: int32(fd)}
	if err := unix.EpollCtl(epollFd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		t.Fatal(err)
	}
	return p
}

// wait waits up to timeout (negative: no limit) for the descriptor to be
// readable: nil, or os.ErrDeadlineExceeded.
func (p *readinessPoller) wait(timeout time.Duration) error {
	msec := -1
	if timeout >= 0 {
		msec = int(timeout / time.Millisecond)
	}
	var events [1]unix.EpollEvent
	for {
		n, err := unix.EpollWait(p.epollFd, events[:], msec)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n == 0:
			return os.ErrDeadlineExceeded
		case events[0].Events&unix.EPOLLIN == 0:
			return errors.New("readiness descriptor polled without EPOLLIN")
		}
		return nil
	}
}

// check fails t at once unless the descriptor is readable within timeout
// (readable), or not readable now (!readable); what says when.
func (p *readinessPoller) check(t *testing.T, timeout time.Duration, readable bool, what string) {
	t.Helper()
	err := p.wait(timeout)
	switch {
	case readable && err != nil:
		t.Fatalf("%s: readiness descriptor not readable: %v", what, err)
	case !readable && err == nil:
		t.Fatalf("%s: readiness descriptor readable", what)
	case !readable && !errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatal(err)
	}
}

func (p *readinessPoller) close(t *testing.T) {
	if p.epollFd >= 0 {
		if err := unix.Close(p.epollFd); err != nil {
			t.Error(err)
		}
		p.epollFd = -1
	}
}

// Readable reports whether poll(2) finds fd readable now.
func Readable(tb testing.TB, fd int) bool {
	tb.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			tb.Fatalf("poll: descriptor %d is not open", fd)
		}
		return n > 0 && fds[0].Revents&unix.POLLIN != 0
	}
}

// ReadinessLatency bounds how long a readiness descriptor takes to show a
// kernel's wake-up: the reader's watcher must be scheduled, which on a
// loaded 2-CPU machine under the race detector takes milliseconds.
const ReadinessLatency = 2 * time.Second

// EventuallyReadable fails tb unless fd becomes readable within
// ReadinessLatency: after a kernel's wake-up, which the reader hears on a
// goroutine of its own.
func EventuallyReadable(tb testing.TB, fd int, when string) {
	tb.Helper()
	for deadline := time.Now().Add(ReadinessLatency); !Readable(tb, fd); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("not readable %s within %v", when, ReadinessLatency)
		}
	}
}

// CountUntilError ranges over a reader's loop (Records, Batches) and
// returns how many items it yielded before the error that ended it (nil
// if none did).
func CountUntilError[T any](loop iter.Seq2[T, error]) (n int, err error) {
	for _, err := range loop {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// CountReads calls read (one of a reader's reads) until it fails, and
// returns how many succeeded and the error.
func CountReads(read func() error) (n int, err error) {
	for {
		if err := read(); err != nil {
			return n, err
		}
		n++
	}
}

// HoldLoop runs a reader's loop in a goroutine whose body, given its
// first item, waits until release is called; release returns once the
// loop has ended.
func HoldLoop[T any](t *testing.T, loop iter.Seq2[T, error]) (release func()) {
	t.Helper()
	held, released, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for _, err := range loop {
			if err == nil {
				close(held)
				<-released
			}
			return
		}
	}()
	Receive(t, held, 5*time.Second, "a loop, given an item,")
	return func() {
		close(released)
		Receive(t, ended, 5*time.Second, "a loop, released,")
	}
}
