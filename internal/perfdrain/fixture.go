//go:build linux

// Package perfdrain is the perf event array drain benchmark of
// perf/bench_test.go, shaped like internal/drainbench's ring buffer drain:
// for each record size, each mode opens its reader on a perf event array,
// a test-run producer from internal/progs fills the buffer of the CPU the
// benchmark runs on (untimed), and the mode drains it; the records are
// counted and the bytes each mode touched (drainbench.Touch) summed and
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
	"github.com/ebpf-zc/ebpf/internal/drainbench"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// Mode is one way of draining a perf event array: Open opens a reader on
// the array with a buffer of perCPUBuffer bytes per CPU and the given
// watermark.
type Mode struct {
	Name string
	Open func(array *ebpf.Map, perCPUBuffer, watermark int) (drainbench.Drainer, error)
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
					b.Run(fmt.Sprintf("mode=%s/touch=%s", mode.Name, drainbench.TouchName(all)), func(b *testing.B) {
						d, err := mode.Open(array, perCPUBuffer, perCPUBuffer/2)
						if err != nil {
							b.Fatalf("mode %s: %v", mode.Name, err)
						}
						defer d.Close()
						fix := &fixture{producer: producer, size: size, perFill: fits(perCPUBuffer, size)}
						fix.drain(b, d, all)
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

// fixture is a producer and what it left in the buffer of the mode being
// measured.
type fixture struct {
	producer *progs.Producer
	size     int
	perFill  int
	inBuffer int    // records produced and not yet drained
	nextSeq  uint64 // sequence number of the oldest of them
}

// fill adds up to want records to the empty buffer, untimed.
func (f *fixture) fill(b *testing.B, want int) {
	b.StopTimer()
	defer b.StartTimer()
	before, droppedBefore, err := f.producer.Counts()
	if err != nil {
		b.Fatal(err)
	}
	if err := f.producer.Run(min(want, f.perFill)); err != nil {
		b.Fatal(err)
	}
	after, dropped, err := f.producer.Counts()
	if err != nil {
		b.Fatal(err)
	}
	// A restarted test run may overflow the buffer: the records that made
	// it carry consecutive numbers from before, and a drainer skips the
	// lost-samples record the next fill brings.
	f.inBuffer = int((after - before) - (dropped - droppedBefore))
	f.nextSeq = before
	if f.inBuffer == 0 {
		b.Fatalf("a fill of %d records placed none: is the reader's buffer on this CPU?", min(want, f.perFill))
	}
}

// expectedSum is what touching n records from seq on must add up to
// (word i of record seq holds seq+i).
func (f *fixture) expectedSum(seq uint64, n int, all bool) uint64 {
	count := uint64(n)
	seqs := count*seq + count*(count-1)/2
	if !all {
		return seqs
	}
	words := uint64(f.size / 8)
	return words*seqs + count*words*(words-1)/2
}

// drain has d drain b.N records, refilling the buffer whenever it is
// empty, fails b if the records touched do not add up to what the
// producer wrote, and reports Mrec/s beside ns/op.
func (f *fixture) drain(b *testing.B, d drainbench.Drainer, all bool) {
	b.SetBytes(int64(f.size))
	b.ReportAllocs()
	b.ResetTimer()
	var sum, want uint64
	for left := b.N; left > 0; {
		if f.inBuffer == 0 {
			f.fill(b, left)
		}
		n := min(left, f.inBuffer)
		got, err := d.Drain(n, all)
		if err != nil {
			b.Fatal(err)
		}
		sum += got
		want += f.expectedSum(f.nextSeq, n, all)
		f.inBuffer -= n
		f.nextSeq += uint64(n)
		left -= n
	}
	b.StopTimer()
	if sum != want {
		b.Fatalf("records touched add up to %d, want %d: a mode skipped or repeated records", sum, want)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
}

// errEmpty is a drain that found fewer records than it was asked for.
func errEmpty(mode string, got, n int) error {
	return fmt.Errorf("%s: buffers empty after %d of %d records", mode, got, n)
}

// expired reports whether err is the deadline every mode's reader has in
// the past: the end of what is in the buffers.
func expired(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
