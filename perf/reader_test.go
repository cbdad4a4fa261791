//go:build linux

package perf

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestReadRecords: records written on each CPU arrive once, in order per
// CPU, tagged with their CPU, by Read, by Records and by Batches.
func TestReadRecords(t *testing.T) {
	for _, style := range styles {
		t.Run(style, func(t *testing.T) {
			m := newEventArray(t)
			r := newTestReader(t, m, 1<<16, ReaderOptions{})
			const size, n = 40, 100
			p := newProducer(t, m, size)
			cpus := bpftest.CPUs(t)
			for _, cpu := range cpus {
				runOn(t, p, cpu, n)
			}
			r.SetDeadline(time.Now())
			next := map[int]uint64{}
			perCPU := map[int]int{}
			handle := func(rec *Record) {
				seq := checkSample(t, rec.RawSample, size)
				if last, ok := next[rec.CPU]; ok && seq <= last {
					t.Fatalf("CPU %d: record %d after %d", rec.CPU, seq, last)
				}
				next[rec.CPU] = seq
				perCPU[rec.CPU]++
			}
			var err error
			if style == "read" {
				var rec Record
				for err = r.ReadInto(&rec); err == nil; err = r.ReadInto(&rec) {
					handle(&rec)
				}
			} else {
				for rec, e := range loopOf(r, style) {
					if e != nil {
						err = e
						break
					}
					handle(rec)
				}
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("ended with %v, want the deadline", err)
			}
			for _, cpu := range cpus {
				if perCPU[cpu] != n {
					t.Fatalf("records per CPU: %v, want %d on each of %v", perCPU, n, cpus)
				}
			}
		})
	}
}
