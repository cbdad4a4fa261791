//go:build linux

// Package perfdrain is the perf event array drain benchmark of
// perf/bench_test.go, shaped like internal/drainbench's ring buffer drain:
// for each record size, each mode opens its reader on a perf event array,
// a test-run producer from internal/progs fills the buffer of the CPU the
// benchmark runs on (untimed), and the mode drains it; the records are
// counted and the bytes each mode touched (drainloop.Touch) summed and
// checked.
//
// Every reader is opened with the same Watermark, half a buffer, so the
// fills wake nobody but every 8 MiB and the drain measures the reader,
// not the wakeups: each mode reads what is in the buffer without waiting
// (a deadline in the past).
package perfdrain

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/drainloop"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// Mode is one way of draining a perf event array: Open opens a reader on
// the array with a buffer of perCPUBuffer bytes per CPU and the given
// watermark.
type Mode struct {
	Name string
	Open func(array *ebpf.Map, perCPUBuffer, watermark int) (drainloop.Drainer, error)
}

// Run drains perf buffers that a test-run program filled, for each size,
// each mode with touch=head and touch=all in turn; an op is one record and
// the fill is not timed. The benchmarks are named size=S/mode=M/touch=T
// under b, as BenchmarkRead of the ring buffer names them.
func Run(b *testing.B, perCPUBuffer int, sizes []int, modes []Mode) {
	for _, size := range sizes {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			array, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
			bpftest.SkipIfUnavailable(b, err, "BPF perf event arrays")
			b.Cleanup(func() { array.Close() })
			producer, err := progs.NewPerfProducer(progs.PerfSpec{Events: array, Size: size, Pattern: true})
			bpftest.SkipIfUnavailable(b, err, "BPF perf event arrays")
			b.Cleanup(func() { producer.Close() })
			for _, mode := range modes {
				for _, all := range []bool{false, true} {
					b.Run(fmt.Sprintf("mode=%s/touch=%s", mode.Name, drainloop.TouchName(all)), func(b *testing.B) {
						d, err := mode.Open(array, perCPUBuffer, perCPUBuffer/2)
						if err != nil {
							b.Fatalf("mode %s: %v", mode.Name, err)
						}
						defer d.Close()
						fix := &fixture{producer: producer, perFill: fits(perCPUBuffer, size)}
						drainloop.Run(b, d, all, size, fix.fill)
					})
				}
			}
		})
	}
}

// fits is how many records of size bytes a buffer of perCPUBuffer bytes
// takes, leaving room for a record of lost samples.
func fits(perCPUBuffer, size int) int {
	record := 8 + (size+4+7)&^7 // header, u32 size, padded sample
	return (perCPUBuffer - 24) / record
}

// fixture is a producer filling the buffer of the mode being measured.
type fixture struct {
	producer *progs.Producer
	perFill  int
}

// fill adds up to want records to the empty buffer (drainloop.Run stops
// the timer around it).
func (f *fixture) fill(b *testing.B, want int) (placed int, firstSeq uint64) {
	// Of an overflow (progs.Producer.Fill), a drainer skips the
	// lost-samples record the next fill brings.
	placed, firstSeq, err := f.producer.Fill(min(want, f.perFill))
	if err != nil {
		b.Fatal(err)
	}
	if placed == 0 {
		b.Fatalf("a fill of %d records placed none: is the reader's buffer on this CPU?", min(want, f.perFill))
	}
	return placed, firstSeq
}

// errEmpty is a drain that found fewer records than it was asked for.
func errEmpty(mode string, got, n int) error {
	return fmt.Errorf("%s: buffers empty after %d of %d records", mode, got, n)
}

// expired reports whether err is the deadline every mode's reader has in
// the past: the end of what is in the buffers.
func expired(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
