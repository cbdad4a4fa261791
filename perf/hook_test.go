//go:build linux

package perf

import (
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func TestReadinessFD(t *testing.T) {
	bpftest.CheckReadiness(t, func(t *testing.T) bpftest.ReadinessTarget {
		m := newEventArray(t)
		p := newProducer(t, m, 16)
		before := bpftest.OpenResources(t)
		r := newTestReader(t, m, 4096, ReaderOptions{})
		return bpftest.ReadinessTarget{
			ReadinessFD: r.ReadinessFD,
			Produce: func(n int) {
				if err := p.RunExactly(n); err != nil {
					t.Fatal(err)
				}
			},
			Drain: func(loop bool) (int, error) {
				r.SetDeadline(time.Now())
				defer r.SetDeadline(time.Time{})
				if loop {
					return bpftest.CountUntilError(r.Records())
				}
				return bpftest.CountReads(func() error { _, err := r.Read(); return err })
			},
			ReadOne: func() error { _, err := r.Read(); return err },
			Hold:    func() func() { return bpftest.HoldLoop(t, r.Records()) },
			Flush:   r.Flush,
			Close:   r.Close,
			Flushed: ErrFlushed,
			Before:  before,
		}
	})
}

// TestReadinessModel checks the readiness descriptor after every step of
// random reading (bpftest.CheckReadinessModel), records produced on one
// CPU, each waking the reader (no Watermark).
func TestReadinessModel(t *testing.T) {
	bpftest.CheckReadinessModel(t, bpftest.ModelSteps(t), func(t *testing.T) bpftest.ModelTarget {
		m := newEventArray(t)
		p := newProducer(t, m, 16)
		cpu := bpftest.CPUs(t)[0]
		before := bpftest.OpenResources(t)
		r := newTestReader(t, m, 1<<16, ReaderOptions{})
		var next uint64
		seq := func(rec *Record) uint64 {
			if len(rec.RawSample) != rawLen(16) {
				return ^uint64(0) // never produced: the model says so
			}
			seq, err := progs.CheckRecord(rec.RawSample[:16], 16, true)
			if err != nil {
				return ^uint64(0)
			}
			return seq
		}
		return bpftest.ModelTarget{
			ReadinessFD: r.ReadinessFD,
			Produce: func(n int) (seqs []uint64) {
				runOn(t, p, cpu, n)
				for range n {
					seqs = append(seqs, next)
					next++
				}
				return seqs
			},
			Read: func() (uint64, error) {
				var rec Record
				if err := r.ReadInto(&rec); err != nil {
					return 0, err
				}
				return seq(&rec), nil
			},
			Records:     bpftest.ModelRecords(r.Records(), seq),
			Probe:       bpftest.ModelProbe(r.Batches()),
			SetDeadline: r.SetDeadline,
			Flush:       r.Flush,
			Close:       r.Close,
			Flushed:     ErrFlushed,
			Before:      before,
		}
	})
}
