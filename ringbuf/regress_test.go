//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/progs"
)

// Regression tests for issue 21's findings, one test per finding.

// stillWaiting fails t if anything arrives on ended within d: the
// goroutines that report there were meant to be blocked.
func stillWaiting[T any](t *testing.T, ended <-chan T, d time.Duration, what string) {
	t.Helper()
	select {
	case v := <-ended:
		t.Fatalf("%s returned (%v); want it still waiting", what, v)
	case <-time.After(d):
	}
}

// receive returns what arrives on ch within d, or fails t: what is still
// blocked.
func receive[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s still blocked after %v", what, d)
	}
	var zero T
	return zero
}

// waitAll is a blocking read that ends only with an error: a Records loop
// or a ReadInto loop that reads everything.
type waitAll struct {
	name string
	wait func(r *Reader) error
}

var waitAllStyles = []waitAll{
	{"Records", func(r *Reader) error {
		for _, err := range r.Records() {
			if err != nil {
				return err
			}
		}
		return errors.New("loop ended without an error")
	}},
	{"ReadInto", func(r *Reader) error {
		var rec Record
		for {
			if err := r.ReadInto(&rec); err != nil {
				return err
			}
		}
	}},
}

// TestIdleWaitersDoNotSpin (finding 1): two goroutines waiting on a ring
// that went quiet sleep, whatever woke them before: records (a loop
// finishing its batch, a ReadInto waking the others), a deadline set and
// removed. The process uses at most idleCPUBudget of a CPU while they
// wait.
func TestIdleWaitersDoNotSpin(t *testing.T) {
	for _, style := range waitAllStyles {
		t.Run(style.name, func(t *testing.T) {
			m := newRingMap(t, 4096)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16})
			r := newTestReader(t, m)
			ended := make(chan error, 2)
			for range 2 {
				go func() { ended <- style.wait(r) }()
			}
			stillWaiting(t, ended, 50*time.Millisecond, "a waiter on an empty ring")
			produce(t, p, 10)
			r.SetDeadline(time.Now().Add(time.Hour))
			r.SetDeadline(time.Time{})
			stillWaiting(t, ended, 100*time.Millisecond, "a waiter after the wake-ups")
			if n := r.AvailableBytes(); n != 0 {
				t.Fatalf("%d bytes left unread: the waiters did not take the records", n)
			}
			checkIdleCPU(t, "two "+style.name+" waiters")
			stillWaiting(t, ended, 0, "a waiter, while CPU was measured,")
			r.Close()
			for range 2 {
				if err := receive(t, ended, 5*time.Second, "a waiter, after Close,"); !errors.Is(err, ErrClosed) {
					t.Errorf("waiter ended with %v, want ErrClosed", err)
				}
			}
		})
	}
}

// viewSink keeps the compiler from dropping the reads of a view.
var viewSink atomic.Uint64

// peekUntilClosed peeks, reads every byte of the view and consumes, until
// an error; peeks counts the views handed out.
func peekUntilClosed(r *Reader, peeks *atomic.Int64) error {
	var (
		rec Record
		sum uint64
	)
	defer func() { viewSink.Add(sum) }()
	for {
		if err := r.PeekInto(&rec); err != nil {
			return err
		}
		peeks.Add(1)
		for _, b := range rec.RawSample {
			sum += uint64(b)
		}
		if err := r.Consume(); err != nil {
			return err
		}
	}
}

// TestCloseDuringPeek (finding 2): Close while another goroutine peeks
// and consumes, round after round, each with a fresh Reader on a ring
// producers keep busy. The peeker ends with ErrClosed and never faults
// (the test runs in a child process, so a fault fails it with the child's
// output); afterwards no ring mapping and no descriptor is left.
func TestCloseDuringPeek(t *testing.T) {
	inChild(t, 2*time.Minute, func(t *testing.T) {
		const maxRounds = 20_000
		moreProcs(t)
		m := newRingMap(t, 64<<10)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 64, Pattern: true})
		produce(t, p, 100)
		before := countResources(t)

		stopProducing := keepProducing(t, []*progs.Producer{p}, 2, nil) // a full ring drops: fine here

		end := time.Now().Add(2 * time.Second)
		rounds, totalPeeks := 0, int64(0)
		for ; rounds < maxRounds && time.Now().Before(end); rounds++ {
			r, err := NewReader(m)
			if err != nil {
				t.Fatalf("round %d: %v", rounds, err)
			}
			var peeks atomic.Int64
			ended := make(chan error, 1)
			go func() { ended <- peekUntilClosed(r, &peeks) }()
			// Close after 0 to 500 views: before the first, in the middle
			// of a batch, while a view is held, while waiting.
			// It spins rather than yield: a yield on two busy CPUs hands
			// the peeker a whole time slice.
			target, start := rand.Int64N(501), time.Now()
			for peeks.Load() < target && time.Since(start) < 5*time.Millisecond {
			}
			if err := r.Close(); err != nil {
				t.Fatalf("round %d: Close: %v", rounds, err)
			}
			if err := receive(t, ended, 10*time.Second, fmt.Sprintf("round %d: the peeker, after Close,", rounds)); !errors.Is(err, ErrClosed) {
				t.Fatalf("round %d: peeker ended with %v, want ErrClosed", rounds, err)
			}
			totalPeeks += peeks.Load()
		}
		stopProducing()
		t.Logf("%d rounds, %d views read", rounds, totalPeeks)
		checkNoLeaks(t, before, fmt.Sprintf("%d rounds of Close during Peek", rounds))
	})
}
