//go:build linux

package ringbuf

import (
	"iter"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// hookReader is what Reader and MultiReader share of the readiness
// contract's needs.
type hookReader interface {
	ReadinessFD() (int, error)
	SetDeadline(time.Time)
	Records() iter.Seq2[*Record, error]
	Batches() iter.Seq2[*Batch, error]
	Flush() error
	Close() error
}

// readinessTarget is r fed by p; drain reads all there is (Read, or
// Batches for a MultiReader), the deadline passed.
func readinessTarget(t *testing.T, r hookReader, before bpftest.Resources, p *progs.Producer, drain func() (int, error)) bpftest.ReadinessTarget {
	t.Helper()
	t.Cleanup(func() { r.Close() })
	return bpftest.ReadinessTarget{
		ReadinessFD: r.ReadinessFD,
		Produce:     func(n int) { produce(t, p, n) },
		Drain: func(loop bool) (int, error) {
			r.SetDeadline(time.Now())
			defer r.SetDeadline(time.Time{})
			if loop {
				return bpftest.CountUntilError(r.Records())
			}
			return drain()
		},
		ReadOne: func() error {
			for _, err := range r.Records() {
				return err
			}
			return nil
		},
		Hold:    func() func() { return bpftest.HoldLoop(t, r.Records()) },
		Flush:   r.Flush,
		Close:   r.Close,
		Flushed: ErrFlushed,
		Before:  before,
	}
}

func TestReadinessFD(t *testing.T) {
	bpftest.CheckReadiness(t, func(t *testing.T) bpftest.ReadinessTarget {
		m := newRingMap(t, 4096)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Method: progs.Output})
		before := bpftest.OpenResources(t)
		r, err := NewReader(m)
		if err != nil {
			t.Fatal(err)
		}
		return readinessTarget(t, r, before, p, func() (int, error) {
			return bpftest.CountReads(func() error { _, err := r.Read(); return err })
		})
	})
}

func TestMultiReaderReadinessFD(t *testing.T) {
	bpftest.CheckReadiness(t, func(t *testing.T) bpftest.ReadinessTarget {
		idle, m := newRingMap(t, 4096), newRingMap(t, 8192)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Method: progs.Reserve})
		before := bpftest.OpenResources(t)
		mr, err := NewMultiReader(idle, m)
		if err != nil {
			t.Fatal(err)
		}
		return readinessTarget(t, mr, before, p, func() (n int, err error) {
			for b, err := range mr.Batches() {
				if err != nil {
					return n, err
				}
				for range b.Samples() {
					n++
				}
			}
			return n, nil // not reached: the loop ends with an error
		})
	})
}

// TestReadinessFDLevel: a ring buffer's descriptor becomes readable once
// the kernel wakes the reader, and stays readable while records wait,
// read or not since it was polled; a read that leaves some does not hide
// them.
func TestReadinessFDLevel(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Method: progs.Output})
	r := newTestReader(t, m)
	fd, err := r.ReadinessFD()
	if err != nil {
		t.Fatal(err)
	}
	produce(t, p, 3)
	bpftest.EventuallyReadable(t, fd, "after the kernel's wake-up for 3 records")
	for left := 3; left > 0; left-- {
		for range 2 {
			if !bpftest.Readable(t, fd) {
				t.Fatalf("%d records wait, and the descriptor is not readable", left)
			}
		}
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	}
	if bpftest.Readable(t, fd) {
		t.Fatal("every record read, and the descriptor is readable")
	}
}

// modelTarget is a Reader's or MultiReader's r, fed by producers, one a
// ring, of 16-byte records numbered by ring and sequence number.
func modelTarget(t *testing.T, r hookReader, before bpftest.Resources, producers []*progs.Producer) bpftest.ModelTarget {
	t.Helper()
	t.Cleanup(func() { r.Close() })
	next := make([]uint64, len(producers))
	records := bpftest.ModelRecords(r.Records(), modelKey)
	return bpftest.ModelTarget{
		ReadinessFD: r.ReadinessFD,
		Produce: func(n int) (keys []uint64) {
			ring := rand.IntN(len(producers))
			produce(t, producers[ring], n)
			for range n {
				keys = append(keys, uint64(ring)<<32|next[ring])
				next[ring]++
			}
			return keys
		},
		Read: func() (key uint64, err error) {
			err = records(func(k uint64) bool { key = k; return false })
			return key, err
		},
		Records:     records,
		Probe:       bpftest.ModelProbe(r.Batches()),
		SetDeadline: r.SetDeadline,
		Flush:       r.Flush,
		Close:       r.Close,
		Flushed:     ErrFlushed,
		Before:      before,
	}
}

// modelKey names a 16-byte record of the model tests by its ring and
// sequence number; a bad one by a number never produced, which the model
// reports.
func modelKey(rec *Record) uint64 {
	seq, err := progs.CheckRecord(rec.RawSample, 16, true)
	if err != nil {
		return ^uint64(0)
	}
	return uint64(rec.Ring)<<32 | seq
}

// TestReadinessModel checks the readiness descriptor after every step of
// random reading (bpftest.CheckReadinessModel): Reader with ReadInto and
// Peek beside its loops, and a MultiReader of two rings.
func TestReadinessModel(t *testing.T) {
	steps := bpftest.ModelSteps(t)
	t.Run("Reader", func(t *testing.T) {
		bpftest.CheckReadinessModel(t, steps, func(t *testing.T) bpftest.ModelTarget {
			m := newRingMap(t, 1<<16)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true, Method: progs.Output})
			before := bpftest.OpenResources(t)
			r := newTestReader(t, m)
			target := modelTarget(t, r, before, []*progs.Producer{p})
			target.Read = modelRead(r.ReadInto)
			target.Peek = modelRead(r.PeekInto)
			target.Consume = r.Consume
			return target
		})
	})
	t.Run("MultiReader", func(t *testing.T) {
		bpftest.CheckReadinessModel(t, steps, func(t *testing.T) bpftest.ModelTarget {
			a, b := newRingMap(t, 1<<16), newRingMap(t, 1<<16)
			pa := newProducer(t, progs.RingbufSpec{Ring: a, Size: 16, Pattern: true, Method: progs.Output})
			pb := newProducer(t, progs.RingbufSpec{Ring: b, Size: 16, Pattern: true, Method: progs.Output})
			before := bpftest.OpenResources(t)
			mr, err := NewMultiReader(a, b)
			if err != nil {
				t.Fatal(err)
			}
			return modelTarget(t, mr, before, []*progs.Producer{pa, pb})
		})
	})
}

// modelRead is a ModelTarget's Read or Peek by readInto (ReadInto,
// PeekInto).
func modelRead(readInto func(*Record) error) func() (uint64, error) {
	return func() (uint64, error) {
		var rec Record
		if err := readInto(&rec); err != nil {
			return 0, err
		}
		return modelKey(&rec), nil
	}
}
