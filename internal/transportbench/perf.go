//go:build linux

package transportbench

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"

	"github.com/ebpf-zc/ebpf/internal/readloop"
	ourperf "github.com/ebpf-zc/ebpf/perf"
)

// The perf readers beside PerfReadInto: our Records, and both readers
// with a watermark. A wakeup per event costs the same whoever reads, so
// the readers themselves compare under the same Watermark.
const (
	// PerfRecords ranges over our perf.Reader's Records, zero-copy,
	// waking on every event as PerfReadInto does.
	PerfRecords Reader = "perf-records"
	// PerfReadIntoWatermark is PerfReadInto with PerfWatermark.
	PerfReadIntoWatermark Reader = "perf-readinto-wm"
	// PerfRecordsWatermark is PerfRecords with PerfWatermark.
	PerfRecordsWatermark Reader = "perf-records-wm"
)

// perfCases are the perf rows after PerfReadInto's.
func perfCases() []Case {
	return []Case{
		{Perf, PerfRecords},
		{Perf, PerfReadIntoWatermark},
		{Perf, PerfRecordsWatermark},
	}
}

// PerfWatermark is the watermark of the -wm readers: a quarter of a CPU's
// buffer, so the kernel wakes the reader every few thousand events and
// never lets it fall a buffer behind. Flush drains what is below it at
// the end.
func PerfWatermark(perCPUBuffer int) int { return perCPUBuffer / 4 }

// perfReader opens the perf reader cfg asks for on t.events, with a buffer
// per CPU of cfg.RingSize split over the CPUs.
func (t *transport) perfReader(cfg Config) error {
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	perCPU := max(cfg.RingSize/cpus, 4096)
	watermark := 0
	switch cfg.Case.Reader {
	case PerfReadIntoWatermark, PerfRecordsWatermark:
		watermark = PerfWatermark(perCPU)
	}
	switch cfg.Case.Reader {
	case PerfReadInto, PerfReadIntoWatermark:
		rd, err := perf.NewReaderWithOptions(t.events, perCPU, perf.ReaderOptions{Watermark: watermark})
		if err != nil {
			return fmt.Errorf("transportbench: perf reader: %w", err)
		}
		t.closers = append(t.closers, rd.Close)
		t.consume = func(handle func([]byte)) (err error) {
			t.perfLost, err = readloop.Perf(rd, handle)
			return err
		}
		t.stop = func() { rd.Flush() }
	case PerfRecords, PerfRecordsWatermark:
		rd, err := ourperf.NewReaderWithOptions(t.events, perCPU, ourperf.ReaderOptions{Watermark: watermark})
		if err != nil {
			return fmt.Errorf("transportbench: our perf reader: %w", err)
		}
		t.closers = append(t.closers, rd.Close)
		t.consume = func(handle func([]byte)) (err error) {
			t.perfLost, err = readloop.PerfRecords(rd, handle)
			return err
		}
		t.stop = func() { rd.Flush() }
	default:
		return fmt.Errorf("transportbench: %s cannot read a perf event array", cfg.Case.Reader)
	}
	return nil
}
