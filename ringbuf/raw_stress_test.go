//go:build linux

package ringbuf

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// TestStressRaw: one ring, producers of two sizes on both CPUs; each
// round a RawReader whose goroutine runs lease after lease, reading up to
// 256 samples (a ring's worth and more), committing, breaking, panicking and dawdling at random,
// with deadlines and Flush at random instants and Close at a random
// instant (from inside a lease in one round out of three). Every record
// arrives exactly once, and every view is intact when its lease commits.
func TestStressRaw(t *testing.T) {
	bpftest.InChild(t, stressDuration(t)+2*time.Minute, func(t *testing.T) {
		bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
		bpftest.MoreProcs(t)
		m := newRingMap(t, 4096) // a lease may read more than it holds
		producers, shared := newProducers(t, mixedSpecs(m)[:2])
		book := &ledger{Ledger: shared}
		bySize := func(*Record) int { return -1 }
		before := bpftest.OpenResources(t)

		stopProducing := bpftest.KeepProducing(t, producers, bpftest.CPUs(t), burstyPause)
		rounds := 0
		for end := time.Now().Add(stressDuration(t)); time.Now().Before(end) && !t.Failed(); rounds++ {
			rr, err := NewRawReader(m)
			if err != nil {
				t.Fatalf("round %d: %v", rounds, err)
			}
			s := &stressReader{rd: ringsTarget{rr.rings}, ledger: book, stream: bySize, chaotic: true}
			s.run(t, []func() error{func() error { return s.leases(rr) }}, stressLifetime())
		}
		stopProducing()
		t.Logf("%d rounds, %d records delivered", rounds, book.Delivered())

		rr, err := NewRawReader(m)
		if err != nil {
			t.Fatal(err)
		}
		s := &stressReader{rd: ringsTarget{rr.rings}, ledger: book, stream: bySize}
		s.drainIdle(t, []func() error{func() error { return s.leases(rr) }}, "a RawReader's leases")
		book.Check(t)
		bpftest.CheckNoLeaks(t, before, strconv.Itoa(rounds+1)+" RawReaders closed")
	})
}

// leaseView is a sample a lease holds, and its sequence number when read.
type leaseView struct {
	sample []byte
	seq    uint64
}

// leases runs leases on rr until it is closed.
func (s *stressReader) leases(rr *RawReader) error {
	var views []leaseView
	for {
		if done, bad := bpftest.Retry(s.lease(rr, &views), ErrFlushed, time.Millisecond); done {
			return bad
		}
	}
}

// lease is one lease; it returns nil if it broke or panicked on purpose.
func (s *stressReader) lease(rr *RawReader, views *[]leaseView) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stressPanic); !ok {
				panic(v)
			}
			err = nil
		}
	}()
	*views = (*views)[:0]
	return rr.WithLease(func(l Lease) error {
		remain := -1
		for range 1 + rand.IntN(256) {
			sample, r, err := l.ReadSample()
			if err != nil {
				return err
			}
			if remain == 0 {
				*views = (*views)[:0] // it may have waited, committing them
			}
			remain = r
			s.ledger.Deliver(-1, sample)
			seq, _ := progs.CheckRecord(sample, len(sample), true)
			*views = append(*views, leaseView{sample, seq})
			if s.closeNow.CompareAndSwap(true, false) {
				if err := rr.Close(); err != nil {
					return fmt.Errorf("Close from a lease: %w", err)
				}
			}
			if !s.chaotic {
				continue
			}
			switch n := rand.IntN(200); {
			case n < 10:
				s.checkViews(*views)
				l.Commit()
				*views = (*views)[:0]
			case n < 12:
				return nil // break
			case n < 13:
				panic(stressPanic{})
			case n < 16:
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			}
		}
		s.checkViews(*views)
		return nil
	})
}

// checkViews books an error for a view that changed before its lease
// committed it: the kernel was told too early, and a producer reused it.
func (s *stressReader) checkViews(views []leaseView) {
	for _, v := range views {
		if seq, err := progs.CheckRecord(v.sample, len(v.sample), true); err != nil || seq != v.seq {
			s.ledger.Fail(fmt.Errorf("view of record %d changed before its lease committed it: now record %d (%v)", v.seq, seq, err))
		}
	}
}
