//go:build linux

package perf

import (
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
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
