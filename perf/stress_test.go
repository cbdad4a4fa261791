//go:build linux

package perf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// stressRounds is how long TestStress makes fresh readers for.
const stressRounds = 2 * time.Second

// errStressPanic is what a stress loop body panics with on purpose.
var errStressPanic = errors.New("stress: a loop body panics")

// TestStress: producers on both CPUs; round after round a fresh Reader on
// the same array, read at once by two Records loops and a Batches loop
// whose bodies break, panic, dawdle and (one round in three) Close the
// reader (the Batches body also breaks its inner loop and leaves batches
// unread), and by a ReadInto loop, while deadlines, Flush and
// Pause/Resume come at random instants and Close at a random one. Every
// sample must be well formed and delivered at most once (a sample left in
// a buffer at Close goes with it; one that found a buffer full is counted
// by LostSamples), at most as many as were produced; nothing may fault (a
// child process); Close must give back every fd and mapping; and waiters
// on idle buffers must use under 5 % of a CPU.
func TestStress(t *testing.T) {
	bpftest.InChild(t, 2*time.Minute, func(t *testing.T) {
		const size = 24
		m := newEventArray(t)
		p := newProducer(t, m, size)
		before := bpftest.OpenResources(t)
		ledger := bpftest.NewLedger(progs.CheckRecord, rawLen, []*progs.Producer{p}, []int{size})
		stop := bpftest.KeepProducing(t, []*progs.Producer{p}, bpftest.CPUs(t), func() time.Duration {
			if rand.IntN(4) != 0 {
				return 0 // mostly full buffers
			}
			return time.Duration(rand.IntN(2000)) * time.Microsecond // and now and then empty ones
		})
		rounds := 0
		for end := time.Now().Add(stressRounds); time.Now().Before(end); rounds++ {
			stressRound(t, m, ledger, rand.IntN(3) == 0)
		}
		stop()
		produced, _, err := p.Counts()
		if err != nil {
			t.Fatal(err)
		}
		delivered := ledger.Delivered()
		t.Logf("%d rounds: %d samples produced, %d delivered, %d reported lost", rounds, produced, delivered, ledger.Lost())
		if delivered == 0 || delivered > produced {
			t.Fatalf("%d samples delivered of %d produced", delivered, produced)
		}
		if now := bpftest.OpenResources(t); now != before {
			t.Fatalf("after every reader closed: %+v, before %+v", now, before)
		}
		stressIdle(t, m)
	})
}

// stressRound runs one reader's life, closing it from a loop body if
// fromBody, and fails t if a read ends in a way the contract forbids or
// does not end after Close.
func stressRound(t *testing.T, m *ebpf.Map, ledger *bpftest.Ledger, fromBody bool) {
	t.Helper()
	r, err := NewReader(m, 1<<13)
	bpftest.SkipIfNoPerfEventArray(t, err)
	var (
		closing atomic.Bool
		running sync.WaitGroup
		errs    = make(chan error, 5)
	)
	loop := func() (err error) {
		defer func() {
			if v := recover(); v != nil && v != errStressPanic {
				panic(v)
			}
		}()
		for rec, err := range r.Records() {
			if err != nil {
				return err
			}
			if err := deliverRecord(ledger, rec); err != nil {
				return err
			}
			switch rand.IntN(300) {
			case 0:
				return nil // break
			case 1:
				panic(errStressPanic)
			case 2:
				time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			case 3, 4, 5:
				if fromBody && closing.Load() {
					r.Close()
				}
			}
		}
		return errors.New("Records loop ended without an error")
	}
	batches := func() (err error) {
		defer func() {
			if v := recover(); v != nil && v != errStressPanic {
				panic(v)
			}
		}()
		for b, err := range r.Batches() {
			if err != nil {
				return err
			}
			if rand.IntN(100) == 0 {
				continue // unread: the batch goes back whole
			}
			if done, err := stressBatch(ledger, b, func() {
				if fromBody && closing.Load() {
					r.Close()
				}
			}); done {
				return err
			}
		}
		return errors.New("Batches loop ended without an error")
	}
	readInto := func() error {
		var rec Record
		for {
			if err := r.ReadInto(&rec); err != nil {
				return err
			}
			if err := deliverRecord(ledger, &rec); err != nil {
				return err
			}
		}
	}
	for _, read := range []func() error{loop, loop, batches, readInto} {
		running.Go(func() {
			for {
				if done, bad := bpftest.Retry(read(), ErrFlushed, 500*time.Microsecond); done {
					errs <- bad
					return
				}
			}
		})
	}
	running.Go(func() { errs <- stressChaos(r) })

	time.Sleep(time.Duration(20+rand.IntN(80)) * time.Millisecond)
	if fromBody {
		closing.Store(true)
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ended := make(chan struct{})
	go func() { running.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("a read still runs 10 s after Close")
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ledger.ReaderClosed(0) // what it left in the buffers went with it
}

// stressBatch is the body of TestStress's Batches loop: it delivers b's
// samples and the samples b counted lost (also on panic) and, at random,
// breaks the inner loop (the rest of b goes back), ends the loop (done,
// err nil), panics, dawdles or calls closeIt; done with an error for a
// wrong sample.
func stressBatch(ledger *bpftest.Ledger, b *Batch, closeIt func()) (done bool, err error) {
	defer func() { ledger.DeliverLost(b.LostSamples()) }()
	for sample := range b.Samples() {
		if err := ledger.Deliver(-1, sample); err != nil {
			return true, fmt.Errorf("CPU %d: %w", b.CPU(), err)
		}
		switch rand.IntN(300) {
		case 0:
			return true, nil // break both loops
		case 1:
			panic(errStressPanic)
		case 2:
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		case 3, 4, 5:
			closeIt()
		case 6:
			return false, nil // break the inner loop
		}
	}
	return false, nil
}

// stressChaos sets deadlines (past, near, none), flushes, and pauses and
// resumes the reader at random instants until it is closed.
func stressChaos(r *Reader) error {
	for {
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		var err error
		switch rand.IntN(6) {
		case 0:
			r.SetDeadline(time.Now().Add(-time.Millisecond))
		case 1:
			r.SetDeadline(time.Now().Add(time.Duration(rand.IntN(3000)) * time.Microsecond))
		case 2:
			r.SetDeadline(time.Time{})
		case 3:
			err = r.Flush()
		case 4:
			if err = r.Pause(); err == nil {
				time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
				err = r.Resume()
			}
		}
		switch {
		case errors.Is(err, ErrClosed):
			return nil
		case err != nil:
			return fmt.Errorf("chaos: %w", err)
		}
	}
}

// stressIdle checks that waiters on idle buffers, after all this, use
// under 5 % of a CPU, and that Close ends them.
func stressIdle(t *testing.T, m *ebpf.Map) {
	t.Helper()
	r, err := NewReader(m, 1<<13)
	bpftest.SkipIfNoPerfEventArray(t, err)
	bpftest.CheckIdleWaiters(t, "three waiters", 3, idleWaiters(r), r.Close, ErrClosed)
}
