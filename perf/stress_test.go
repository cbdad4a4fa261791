//go:build linux

package perf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// stressRounds is how long TestStress makes fresh readers for.
const stressRounds = 2 * time.Second

// errStressPanic is what a stress loop body panics with on purpose.
var errStressPanic = errors.New("stress: a loop body panics")

// stressLedger books the samples of one producer across rounds.
type stressLedger struct {
	mu   sync.Mutex
	seen seqcheck.Tracker
	lost uint64 // LostSamples reported
}

// deliver checks a record from any read style and books it, or returns
// why it is wrong: a bad sample, or one delivered before.
func (l *stressLedger) deliver(rec *Record, size int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rec.LostSamples > 0 {
		l.lost += rec.LostSamples
		return nil
	}
	if len(rec.RawSample) != rawLen(size) {
		return fmt.Errorf("sample of %d bytes, want %d", len(rec.RawSample), rawLen(size))
	}
	seq, err := progs.CheckRecord(rec.RawSample[:size], size, true)
	if err != nil {
		return err
	}
	if !l.seen.Add(seq) {
		return fmt.Errorf("CPU %d: sample %d delivered twice", rec.CPU, seq)
	}
	return nil
}

// stressRetry sorts the error that ended a read: done after Close, again
// after a deadline or Flush (or a loop that broke or panicked, nil), a
// failure otherwise.
func stressRetry(err error) (done bool, bad error) {
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, ErrClosed):
		return true, nil
	case errors.Is(err, ErrFlushed), errors.Is(err, os.ErrDeadlineExceeded):
		time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
		return false, nil
	}
	return true, err
}

// TestStress: producers on both CPUs; round after round a fresh Reader on
// the same array, read at once by two Records loops whose bodies break,
// panic, dawdle and (one round in three) Close the reader, and by a
// ReadInto loop, while deadlines, Flush and Pause/Resume come at random
// instants and Close at a random one. Every sample must be well formed
// and delivered at most once (a sample left in a buffer at Close goes
// with it; one that found a buffer full is counted by LostSamples), at
// most as many as were produced; nothing may fault (a child process);
// Close must give back every fd and mapping; and waiters on idle buffers
// must use under 5 % of a CPU.
func TestStress(t *testing.T) {
	bpftest.InChild(t, 2*time.Minute, func(t *testing.T) {
		const size = 24
		m := newEventArray(t)
		p := newProducer(t, m, size)
		fdsBefore, mapsBefore := openResources(t)
		var ledger stressLedger
		stop := bpftest.KeepProducing(t, []*progs.Producer{p}, len(testCPUs(t)), func() time.Duration {
			if rand.IntN(4) != 0 {
				return 0 // mostly full buffers
			}
			return time.Duration(rand.IntN(2000)) * time.Microsecond // and now and then empty ones
		})
		rounds := 0
		for end := time.Now().Add(stressRounds); time.Now().Before(end); rounds++ {
			stressRound(t, m, &ledger, size, rand.IntN(3) == 0)
		}
		stop()
		produced, _, err := p.Counts()
		if err != nil {
			t.Fatal(err)
		}
		delivered := ledger.seen.Delivered()
		t.Logf("%d rounds: %d samples produced, %d delivered, %d reported lost", rounds, produced, delivered, ledger.lost)
		if delivered == 0 || delivered > produced {
			t.Fatalf("%d samples delivered of %d produced", delivered, produced)
		}
		if fds, maps := openResources(t); fds != fdsBefore || maps != mapsBefore {
			t.Fatalf("after every reader closed: %d fds and %d perf mappings, before %d and %d", fds, maps, fdsBefore, mapsBefore)
		}
		stressIdle(t, m)
	})
}

// stressRound runs one reader's life, closing it from a loop body if
// fromBody, and fails t if a read ends in a way the contract forbids or
// does not end after Close.
func stressRound(t *testing.T, m *ebpf.Map, ledger *stressLedger, size int, fromBody bool) {
	t.Helper()
	r, err := NewReader(m, 1<<13)
	skipIfNoBPF(t, err)
	var (
		closing atomic.Bool
		running sync.WaitGroup
		errs    = make(chan error, 4)
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
			if err := ledger.deliver(rec, size); err != nil {
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
	readInto := func() error {
		var rec Record
		for {
			if err := r.ReadInto(&rec); err != nil {
				return err
			}
			if err := ledger.deliver(&rec, size); err != nil {
				return err
			}
		}
	}
	for _, read := range []func() error{loop, loop, readInto} {
		running.Go(func() {
			for {
				if done, bad := stressRetry(read()); done {
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
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
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
	skipIfNoBPF(t, err)
	checkIdleWaiters(t, r, idleWaiters(r))
}
