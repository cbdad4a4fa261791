//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// Regression tests for issue 21's findings, one test per finding.

// waitAll is a blocking read that ends only with an error: a Records loop
// or a ReadInto loop that reads everything.
type waitAll struct {
	name string
	wait func(r *Reader) error
}

var waitAllStyles = []waitAll{
	{"Records", func(r *Reader) error { return bpftest.LoopUntilError(r.Records()) }},
	{"ReadInto", func(r *Reader) error { return bpftest.ReadUntilError(r.ReadInto) }},
}

// TestIdleWaitersDoNotSpin (finding 1): two goroutines waiting on a ring
// that went quiet sleep, whatever woke them before: records (a loop
// finishing its batch, a ReadInto waking the others), a deadline set and
// removed. The process uses at most bpftest.IdleCPUBudget of a CPU while
// they wait.
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
			bpftest.StillWaiting(t, ended, 50*time.Millisecond, "a waiter on an empty ring")
			produce(t, p, 10)
			r.SetDeadline(time.Now().Add(time.Hour))
			r.SetDeadline(time.Time{})
			bpftest.StillWaiting(t, ended, 100*time.Millisecond, "a waiter after the wake-ups")
			if n := r.AvailableBytes(); n != 0 {
				t.Fatalf("%d bytes left unread: the waiters did not take the records", n)
			}
			bpftest.CheckIdleWaiters(t, "two "+style.name+" waiters", 2, ended, r.Close, ErrClosed)
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
	bpftest.InChild(t, 2*time.Minute, func(t *testing.T) {
		const maxRounds = 20_000
		bpftest.MoreProcs(t)
		m := newRingMap(t, 64<<10)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 64, Pattern: true})
		produce(t, p, 100)
		before := bpftest.OpenResources(t)

		stopProducing := bpftest.KeepProducing(t, []*progs.Producer{p}, bpftest.CPUs(t), nil) // a full ring drops: fine here

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
			if err := bpftest.Receive(t, ended, 10*time.Second, fmt.Sprintf("round %d: the peeker, after Close,", rounds)); !errors.Is(err, ErrClosed) {
				t.Fatalf("round %d: peeker ended with %v, want ErrClosed", rounds, err)
			}
			totalPeeks += peeks.Load()
		}
		stopProducing()
		t.Logf("%d rounds, %d views read", rounds, totalPeeks)
		bpftest.CheckNoLeaks(t, before, fmt.Sprintf("%d rounds of Close during Peek", rounds))
	})
}

// TestMultiReaderBreakHandsOnRest (finding 3): of two loops over one
// MultiReader, asleep on empty rings, one is woken by twenty records and
// breaks after the first; the rest of its batch reaches the other loop
// at once, not at some later wake-up that may never come.
func TestMultiReaderBreakHandsOnRest(t *testing.T) {
	const records = 20
	a, b := newRingMap(t, 16<<10), newRingMap(t, 4096)
	quiet := newProducer(t, progs.RingbufSpec{Ring: a, Size: 16, Flags: progs.NoWakeup})
	loud := newProducer(t, progs.RingbufSpec{Ring: a, Size: 16, Flags: progs.ForceWakeup})
	mr := newTestMultiReader(t, a, b)
	var (
		broke    atomic.Bool
		received = make(chan struct{}, records)
		ended    = make(chan error, 2)
	)
	for range 2 {
		go func() {
			for _, err := range mr.Records() {
				if err != nil {
					ended <- err
					return
				}
				if broke.CompareAndSwap(false, true) {
					ended <- nil
					break
				}
				received <- struct{}{}
			}
		}()
	}
	bpftest.StillWaiting(t, ended, 50*time.Millisecond, "a loop on empty rings")
	// All the records, then one wake-up, which epoll hands to one loop:
	// it takes them all as one batch while the other sleeps on.
	produce(t, quiet, records-1)
	produce(t, loud, 1)
	timeout := time.After(2 * time.Second)
	for n := 0; n < records-1; n++ {
		select {
		case <-received:
		case <-timeout:
			t.Fatalf("the other loop received %d of the %d records the breaking loop left, none in the last 2 s", n, records-1)
		}
	}
	if err := <-ended; err != nil {
		t.Fatalf("a loop ended with %v before Close", err)
	}
	mr.Close()
	if err := bpftest.Receive(t, ended, 5*time.Second, "the other loop, after Close,"); !errors.Is(err, ErrClosed) {
		t.Errorf("the other loop ended with %v, want ErrClosed", err)
	}
}

// TestConcurrentPeek (finding 4): Peek, PeekInto and Consume serve one
// goroutine at a time; a PeekInto while another is in progress, or while
// a view is held, returns ErrConcurrentPeek and changes nothing.
func TestConcurrentPeek(t *testing.T) {
	t.Run("view held", func(t *testing.T) {
		m := newRingMap(t, 4096)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
		r := newTestReader(t, m)
		produce(t, p, 2)
		var held, second Record
		if err := r.PeekInto(&held); err != nil {
			t.Fatal(err)
		}
		if err := r.PeekInto(&second); !errors.Is(err, ErrConcurrentPeek) {
			t.Fatalf("PeekInto with a view held: %v, want ErrConcurrentPeek", err)
		}
		if second.RawSample != nil {
			t.Errorf("the refused PeekInto handed out a view of %d bytes", len(second.RawSample))
		}
		if _, err := r.Peek(); !errors.Is(err, ErrConcurrentPeek) {
			t.Fatalf("Peek with a view held: %v, want ErrConcurrentPeek", err)
		}
		for i, rec := range []*Record{&held, &second} {
			if i == 1 {
				if err := r.PeekInto(rec); err != nil {
					t.Fatal(err)
				}
			}
			if seq, err := progs.CheckRecord(rec.RawSample, 16, true); err != nil || seq != uint64(i) {
				t.Fatalf("view %d: record %d, %v; want record %d", i, seq, err, i)
			}
			if err := r.Consume(); err != nil {
				t.Fatal(err)
			}
		}
		if n := r.AvailableBytes(); n != 0 {
			t.Fatalf("%d bytes left after both records were consumed", n)
		}
	})

	t.Run("peek in progress", func(t *testing.T) {
		m := newRingMap(t, 4096)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
		r := newTestReader(t, m)
		type result struct {
			seq uint64
			err error
		}
		first := make(chan result, 1)
		go func() {
			rec, err := r.Peek()
			if err != nil {
				first <- result{err: err}
				return
			}
			seq, err := progs.CheckRecord(rec.RawSample, 16, true)
			first <- result{seq, errors.Join(err, r.Consume())}
		}()
		bpftest.StillWaiting(t, first, 50*time.Millisecond, "a Peek on an empty ring")
		second := make(chan error, 1)
		go func() { _, err := r.Peek(); second <- err }()
		if err := bpftest.Receive(t, second, 2*time.Second, "Peek while another Peek waits (want ErrConcurrentPeek at once)"); !errors.Is(err, ErrConcurrentPeek) {
			t.Fatalf("Peek while another Peek waits: %v, want ErrConcurrentPeek", err)
		}
		produce(t, p, 1)
		if res := bpftest.Receive(t, first, 2*time.Second, "the waiting Peek, after a record came,"); res.err != nil || res.seq != 0 {
			t.Fatalf("the waiting Peek got record %d, %v; want record 0", res.seq, res.err)
		}
		r.SetDeadline(time.Now())
		if rec, err := r.Peek(); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Peek of a ring whose one record was consumed: %d bytes, %v; want the deadline", len(rec.RawSample), err)
		}
	})

	t.Run("two peekers", func(t *testing.T) {
		bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
		const size = 24
		m := newRingMap(t, 64<<10)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: size, Pattern: true})
		r := newTestReader(t, m)
		var (
			mu        sync.Mutex
			tracker   seqcheck.Tracker
			received  [2]int
			conflicts [2]int
			errs      [2]error
			running   sync.WaitGroup
		)
		peeker := func(id int) error {
			var rec Record
			for {
				err := r.PeekInto(&rec)
				if errors.Is(err, ErrConcurrentPeek) {
					mu.Lock()
					conflicts[id]++
					mu.Unlock()
					runtime.Gosched()
					continue
				}
				if err != nil {
					return err
				}
				seq, err := progs.CheckRecord(rec.RawSample, size, true)
				if err != nil {
					return err
				}
				if seq%64 == 0 {
					time.Sleep(100 * time.Microsecond) // hold the view: the other peeker meets it
				}
				if err := r.Consume(); err != nil {
					return fmt.Errorf("Consume after this goroutine's own PeekInto: %w", err)
				}
				mu.Lock()
				if !tracker.Add(seq) {
					err = fmt.Errorf("record %d handed out twice", seq)
				}
				received[id]++
				mu.Unlock()
				if err != nil {
					return err
				}
			}
		}
		for id := range errs {
			running.Add(1)
			go func() {
				defer running.Done()
				errs[id] = peeker(id)
			}()
		}
		bothServed := func() bool {
			mu.Lock()
			defer mu.Unlock()
			return received[0] > 0 && received[1] > 0
		}
		bpftest.ProduceOn(t, []*progs.Producer{p}, bpftest.CPUs(t), 5000, func() bool { return !bothServed() })
		r.SetDeadline(time.Now().Add(200 * time.Millisecond))
		bpftest.Within(t, 10*time.Second, "peekers", running.Wait)

		for id, err := range errs {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("peeker %d ended with %v, want the deadline", id, err)
			}
		}
		produced, dropped, err := p.Counts()
		if err != nil {
			t.Fatal(err)
		}
		if err := tracker.Check(produced, dropped); err != nil {
			t.Error(err)
		}
		if conflicts[0]+conflicts[1] == 0 {
			t.Error("no PeekInto was refused with ErrConcurrentPeek: the peekers never met")
		}
		t.Logf("%d produced, %d dropped; records per peeker %v; refused peeks %v", produced, dropped, received, conflicts)
	})
}

// TestMultiReaderSameRingTwice (finding 5): one ring given twice, whether
// as the same *Map, as a clone or as two slots of a map of maps, would
// be read twice; NewMultiReader refuses it by map ID, names both
// positions, and leaves nothing open.
func TestMultiReaderSameRingTwice(t *testing.T) {
	ring, other := newRingMap(t, 4096), newRingMap(t, 4096)
	clone, err := ring.Clone()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clone.Close() })
	outer, err := ebpf.NewMap(&ebpf.MapSpec{
		Type:       ebpf.HashOfMaps,
		KeySize:    4,
		ValueSize:  4,
		MaxEntries: 8,
		InnerMap:   &ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096},
	})
	bpftest.SkipIfNoRingBuf(t, err)
	t.Cleanup(func() { outer.Close() })
	for key, m := range map[uint32]*ebpf.Map{3: ring, 5: other, 7: ring} {
		if err := outer.Put(key, m); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name      string
		open      func() (*MultiReader, error)
		positions []string
	}{
		{"same map twice", func() (*MultiReader, error) { return NewMultiReader(ring, other, ring) }, []string{"0", "2"}},
		{"map and its clone", func() (*MultiReader, error) { return NewMultiReader(ring, clone) }, []string{"0", "1"}},
		{"map of maps", func() (*MultiReader, error) { return NewMultiReaderFromMapOfMaps(outer) }, []string{"3", "7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := bpftest.OpenResources(t)
			mr, err := tc.open()
			if err == nil {
				mr.Close()
				t.Fatal("no error: the ring would be read twice")
			}
			msg := err.Error()
			for _, want := range append([]string{"same"}, tc.positions...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			bpftest.CheckNoLeaks(t, before, "a refused NewMultiReader")
		})
	}
}

// TestWaiterRepolledBehindHeldView (finding 6): a read that went to
// sleep on an empty ring, before anyone held a view, still gets a record
// committed behind a view taken later. The kernel wakes nobody for it
// (the consumer position stays at the view), so the waiter must look
// again on its own, every millisecond; 2 s is the bound here.
func TestWaiterRepolledBehindHeldView(t *testing.T) {
	type result struct {
		sample []byte
		err    error
	}
	for _, tc := range []struct {
		name string
		read func(r *Reader) result
	}{
		{"ReadInto", func(r *Reader) result {
			var rec Record
			err := r.ReadInto(&rec)
			return result{rec.RawSample, err}
		}},
		{"Records", func(r *Reader) result {
			for rec, err := range r.Records() {
				if err != nil {
					return result{err: err}
				}
				return result{sample: slices.Clone(rec.RawSample)}
			}
			return result{err: errors.New("loop ended without a pair")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newRingMap(t, 4096)
			quiet := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Flags: progs.NoWakeup})
			loud := newProducer(t, progs.RingbufSpec{Ring: m, Size: 24})
			r := newTestReader(t, m)
			got := make(chan result, 1)
			go func() { got <- tc.read(r) }()
			bpftest.StillWaiting(t, got, 50*time.Millisecond, "a read on an empty ring")

			produce(t, quiet, 1) // wakes nobody
			var view Record
			bpftest.Within(t, 2*time.Second, "Peek of the record that woke nobody", func() {
				if err := r.PeekInto(&view); err != nil {
					t.Error(err)
				}
			})
			if len(view.RawSample) != 16 {
				t.Fatalf("Peek got a %d-byte record, want the 16-byte one", len(view.RawSample))
			}
			produce(t, loud, 1) // behind the view: wakes nobody either
			start := time.Now()
			res := bpftest.Receive(t, got, 2*time.Second, "the read that slept before the view was taken, with a record behind the view,")
			if res.err != nil || len(res.sample) != 24 {
				t.Fatalf("the waiting read got %d bytes, %v; want the 24-byte record", len(res.sample), res.err)
			}
			t.Logf("the record behind the view arrived after %v", time.Since(start))
			if err := r.Consume(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Regression tests for issue 27's findings.

// TestFlushEndsEveryWait (finding 1): a Flush ends every loop that waits
// when it is called, also while goroutines read again at once after their
// own ErrFlushed, as upstream's docs invite: none of them may take the
// flush meant for the loop.
func TestFlushEndsEveryWait(t *testing.T) {
	for _, loop := range []struct {
		name string
		wait func(r *Reader) error
	}{
		{"Records", func(r *Reader) error { return bpftest.LoopUntilError(r.Records()) }},
		{"Batches", func(r *Reader) error { return bpftest.LoopUntilError(r.Batches()) }},
	} {
		t.Run(loop.name, func(t *testing.T) {
			r := newTestReader(t, newRingMap(t, 4096))
			bpftest.CheckFlushEndsEveryWait(t, 10, 3, bpftest.FlushTarget{
				Read:       func() error { var rec Record; return r.ReadInto(&rec) },
				Loop:       func() error { return loop.wait(r) },
				Flush:      r.Flush,
				Close:      r.Close,
				Flushed:    ErrFlushed,
				InProgress: r.engine.InProgress,
			})
		})
	}
}

// TestBatchAfterBody (finding 4): a Batch kept past the body of its loop
// yields nothing, after a break (its rest went back to the reader: a walk
// would hand it out twice) and after Close (the ring may be unmapped).
func TestBatchAfterBody(t *testing.T) {
	m := newRingMap(t, 1<<16)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 10)

	var kept *Batch
	for b, err := range r.Batches() {
		if err != nil {
			t.Fatal(err)
		}
		kept = b
		for range b.Samples() {
			break // one sample consumed, the rest given back
		}
		break
	}
	for range kept.Samples() {
		t.Fatal("a Batch kept past a loop that broke yielded a sample")
	}
	r.SetDeadline(time.Now())
	got := 0
	for _, err := range r.Records() {
		if err != nil {
			break
		}
		got++
	}
	if got != 9 {
		t.Fatalf("read %d records after the loop broke, want 9", got)
	}

	produce(t, p, 10)
	r.SetDeadline(time.Time{})
	for b, err := range r.Batches() {
		if err != nil {
			break // ErrClosed
		}
		kept = b
		r.Close() // the loop yields this batch, then ErrClosed
	}
	for range kept.Samples() {
		t.Fatal("a Batch kept past Close yielded a sample")
	}
}

// TestNilRecord: ReadInto and PeekInto refuse a nil *Record with an error
// that says so, before they read: no record is consumed, and no view is
// held, so the next PeekInto and Read get the record.
func TestNilRecord(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 1)
	for name, read := range map[string]func(*Record) error{"ReadInto": r.ReadInto, "PeekInto": r.PeekInto} {
		err := read(nil)
		if !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "nil *Record") {
			t.Errorf("%s(nil): %v, want an error matching os.ErrInvalid that names the nil *Record", name, err)
		}
	}
	if got := kernelConsumer(t, m); got != 0 {
		t.Fatalf("consumer position %d after the refused reads, want 0", got)
	}
	if seq := peekSeq(t, r); seq != 0 {
		t.Fatalf("peeked %d after the refused reads, want 0", seq)
	}
	if err := r.Consume(); err != nil {
		t.Fatal(err)
	}
	if got, want := kernelConsumer(t, m), uint64(24); got != want {
		t.Fatalf("consumer position %d after Consume, want %d", got, want)
	}
}

// TestClosedMap: every constructor given a closed map says its descriptor
// is closed (EBADF), not that the map is of the wrong kind.
func TestClosedMap(t *testing.T) {
	m := newRingMap(t, 4096)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() error{
		"NewReader":      func() error { _, err := NewReader(m); return err },
		"NewRawReader":   func() error { _, err := NewRawReader(m); return err },
		"NewMultiReader": func() error { _, err := NewMultiReader(m); return err },
	} {
		err := open()
		if !errors.Is(err, syscall.EBADF) || errors.Is(err, ebpf.ErrNotSupported) || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s of a closed map: %v; want an error about its closed descriptor", name, err)
		}
	}
}
