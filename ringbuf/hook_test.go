//go:build linux

package ringbuf

import (
	"iter"
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
