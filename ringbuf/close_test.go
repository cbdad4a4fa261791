//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// blockedCalls is one kind of call that blocks in a reader or writer:
// open makes a fresh one and returns the call and its Close.
type blockedCalls struct {
	name    string
	callers int // goroutines that block at once
	open    func(t *testing.T) (call func() error, close func() error)
}

func onReader(call func(r *Reader) error) func(t *testing.T) (func() error, func() error) {
	return func(t *testing.T) (func() error, func() error) {
		r := newTestReader(t, newRingMap(t, 4096))
		return func() error { return call(r) }, r.Close
	}
}

var blockingCalls = []blockedCalls{
	{"Read", 3, onReader(func(r *Reader) error { _, err := r.Read(); return err })},
	{"ReadInto", 3, onReader(func(r *Reader) error { var rec Record; return r.ReadInto(&rec) })},
	{"PeekInto", 1, onReader(func(r *Reader) error { var rec Record; return r.PeekInto(&rec) })},
	{"Records", 3, onReader(func(r *Reader) error { return bpftest.LoopUntilError(r.Records()) })},
	{"Batches", 3, onReader(func(r *Reader) error { return bpftest.LoopUntilError(r.Batches()) })},
	{"MultiReader.Records", 3, func(t *testing.T) (func() error, func() error) {
		mr, err := NewMultiReader(newRingMap(t, 4096), newRingMap(t, 4096))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mr.Close() })
		return func() error { return bpftest.LoopUntilError(mr.Records()) }, mr.Close
	}},
	{"Lease.ReadSample", 1, func(t *testing.T) (func() error, func() error) {
		rr, _ := newTestRawReader(t, 4096)
		return func() error {
			return rr.WithLease(func(l Lease) error { _, _, err := l.ReadSample(); return err })
		}, rr.Close
	}},
	{"Writer.Reserve", 3, func(t *testing.T) (func() error, func() error) {
		w := newTestWriter(t, newUserRingMap(t, 4096))
		fillRing(t, w)
		return func() error { _, err := w.Reserve(8); return err }, w.Close
	}},
	{"Writer.ReserveBatch", 3, func(t *testing.T) (func() error, func() error) {
		w := newTestWriter(t, newUserRingMap(t, 4096))
		fillRing(t, w)
		return func() error { _, err := w.ReserveBatch(make([]Reservation, 4), 8); return err }, w.Close
	}},
}

// TestCloseIsABarrier: when Close returns, every call that was blocked in
// the reader or writer has returned to its caller, with ErrClosed, as
// cilium/ebpf's Close guarantees: code that takes Close for "the reading
// goroutine is done" may rely on it.
func TestCloseIsABarrier(t *testing.T) {
	for _, tc := range blockingCalls {
		t.Run(tc.name, func(t *testing.T) {
			bpftest.CheckCloseBarrier(t, 20, tc.callers, tc.open)
		})
	}
}

// TestCloseFromBodyWaitsForOthers: a loop body that calls Close, while
// other goroutines are blocked in the reader, gets Close back once they
// have returned (none still waits); its own loop then ends with ErrClosed.
// The loop takes the one record alone, and the reads start while its body
// holds it: readers racing the loop for records could take every one.
func TestCloseFromBodyWaitsForOthers(t *testing.T) {
	const creator = "github.com/ebpf-zc/ebpf/ringbuf.TestCloseFromBodyWaitsForOthers"
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 8})
	r := newTestReader(t, m)
	loopEnded := make(chan error, 1)
	inBody, readersIn := make(chan struct{}), make(chan struct{})
	var waitingAtClose []string
	go func() {
		closed := false
		for _, err := range r.Records() {
			if err != nil {
				loopEnded <- err
				return
			}
			if !closed {
				closed = true
				close(inBody)
				<-readersIn
				if err := r.Close(); err != nil {
					t.Error(err)
				}
				waitingAtClose = bpftest.WaitingGoroutines(creator)
			}
		}
		loopEnded <- errors.New("loop ended without an error")
	}()
	loopEndedEarly := func() string {
		select {
		case err := <-loopEnded:
			return fmt.Sprintf("the loop ended with %v before Close", err)
		default:
			return ""
		}
	}
	bpftest.WaitAsleepInWaiter(t, creator, 1, loopEndedEarly)
	produce(t, p, 1)
	bpftest.Receive(t, inBody, 10*time.Second, "the loop, with a record produced,")

	const readers = 2
	readsEnded := make(chan error, readers)
	for range readers {
		go func() { readsEnded <- bpftest.ReadUntilError(r.ReadInto) }()
	}
	bpftest.WaitAsleepInWaiter(t, creator, readers, func() string {
		if n := len(readsEnded); n > 0 {
			return fmt.Sprintf("%d reads ended before Close", n)
		}
		return loopEndedEarly()
	})
	close(readersIn)

	if err := bpftest.Receive(t, loopEnded, 10*time.Second, "Close from a loop body"); !errors.Is(err, ErrClosed) {
		t.Errorf("the closing loop ended with %v, want ErrClosed", err)
	}
	if waitingAtClose != nil {
		t.Errorf("Close in a body returned with reads still waiting:\n%s", strings.Join(waitingAtClose, "\n"))
	}
	for range readers {
		if err := bpftest.Receive(t, readsEnded, 5*time.Second, "a read after Close"); !errors.Is(err, ErrClosed) {
			t.Errorf("a read ended with %v, want ErrClosed", err)
		}
	}
}

// TestCloseRacesWithEveryCall: Close at a varying instant while the calls
// start, block or wake: neither Close nor any call hangs, and every call
// ends with ErrClosed.
func TestCloseRacesWithEveryCall(t *testing.T) {
	for _, tc := range blockingCalls {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 20 {
				call, closeIt := tc.open(t)
				var wg sync.WaitGroup
				started := make(chan struct{})
				for range tc.callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-started
						if err := call(); !errors.Is(err, ErrClosed) {
							t.Errorf("trial %d: %v, want ErrClosed", trial, err)
						}
					}()
				}
				close(started)
				time.Sleep(time.Duration(trial%5) * time.Millisecond)
				bpftest.Within(t, 5*time.Second, "Close", func() { closeIt() })
				bpftest.Within(t, 5*time.Second, tc.name, wg.Wait)
			}
		})
	}
}
