//go:build linux

package benchfamily

import (
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// sweepModes are the modes the sweep runs of BenchmarkRead: upstream's
// ReadInto (cilium/ebpf v0.22), our copy, and our three zero-copy reads.
var sweepModes = []string{"upstream", "copy", "peek", "records", "batch"}

// sweepXTicks are the sizes the plots label: powers of two, and between
// them the sizes where a walk's width changed before (160 B: the stream
// loads of Records and Batches stopped there until issue 52).
const sweepXTicks = "16,32,48,64,96,128,160,192,256,384,512,768,1024,2048,4096"

// sweep is make bench-sweep: BenchmarkRead's copy and zero-copy modes at
// every size a record can have from 16 to 512 B (by 8) and at every 64th
// to 4 KiB, both touches, pinned, 64 MiB rings: 119 sizes. A change in a
// reader's walk (how much of a record it loads at once, and up to which
// size) makes a hole at one size that the 8 sizes of make bench step
// over, as the one at 160 B on AMD Zen 4 (docs/bench-sweep.md). Each size
// runs SWEEP_BENCHTIME, 5ms, in 3 rounds: about 4 minutes on the 2-vCPU
// Intel Xeon guest; the medians of 3 runs are enough to see a hole, not
// for a verdict at each size, so the summary reads medians.
var _ = register(&Family{
	Name:      "sweep",
	What:      "the ring buffer drain's copy and zero-copy modes at every size to 512 B (by 8) and to 4 KiB (by 64): where a reader falls into a hole",
	Page:      "bench-sweep.md",
	Reference: "ringbuf/intel-xeon/sweep/sweep.txt",
	Rounds:    3,
	RoundsEnv: "SWEEP_COUNT",
	Knobs: []benchknob.Knob{
		{Env: "SWEEP_SIZES", Kind: benchknob.Sizes, Default: "sweep8",
			Doc: "event sizes: sweep8 is 16..512 by 8 and 576..4096 by 64 (119 sizes); a list narrows it"},
		{Env: "SWEEP_RING", Kind: benchknob.Int, Default: "67108864", Doc: "ring buffer bytes (make bench's 64 MiB)"},
		{Env: "SWEEP_BENCHTIME", Kind: benchknob.Duration, Default: "5ms",
			Doc: "the -benchtime of each result (BENCHTIME where this is unset); the untimed fills and the ramp cost several times as much"},
	},
	Rig: []string{"internal/drainbench", "internal/drainbench/ours", "internal/drainloop", "internal/rawring"},
	Runs: []Run{{
		Pkg: "./ringbuf/", Bench: "BenchmarkRead$//mode=(" + strings.Join(sweepModes, "|") + ")$",
		BenchtimeEnv: "SWEEP_BENCHTIME", Pin: true, Benchmem: true,
		// BenchmarkRead reads its sizes and ring from the ringbuf
		// family's knobs, which make bench sets otherwise.
		Env: []string{"RINGBUF_BENCH_SIZES=${SWEEP_SIZES}", "RINGBUF_BENCH_RING=${SWEEP_RING}"},
		Benchmarks: []Benchmark{{
			Name: "BenchmarkRead",
			Dims: []Dim{KnobValues("SWEEP_SIZES", "sizes"), Fixed(len(sweepModes), "modes"), Fixed(2, "touches")},
			Cost: sweepCost,
		}},
	}},
	Tables: []Table{
		{Heading: "drain rate of each mode, medians of the rounds, one table per touch; with 3 rounds benchstat finds no difference significant at a size: read the medians",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", "/touch", "-row", "/size", "-col", "/mode@(" + strings.Join(sweepModes, " ") + ")"}},
		{Heading: "records and batch against copy",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", "/touch", "-row", "/size", "-col", "/mode@(copy records batch)"}},
		{Heading: "records and batch against peek",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", "/touch", "-row", "/size", "-col", "/mode@(peek records batch)"}},
		{Heading: "allocations (-benchmem)", Check: noAllocs},
	},
	Plots: []Plot{{
		Suffix: "-head",
		Args:   sweepPlot("head", "ring buffer drain rate at every size, consumer reads 8 bytes of each record (touch=head)"),
	}, {
		Suffix: "-all",
		Args:   sweepPlot("all", "ring buffer drain rate at every size, consumer reads every byte (touch=all)"),
	}},
	Summary: []Section{{
		Title: "Sweep: records and batch at every size, from benchstat's medians (too few runs\n" +
			"for a verdict a size). A ratio is a mode's median over the base's at one size;\n" +
			"best(up,copy) is the better of upstream's ReadInto and our copy there.",
		Filter: ".name:Read .unit:Mrec/s",
		Table:  "/touch",
		Row:    "/size",
		Key:    "/mode",
		Sweep: &Sweep{
			Modes: []string{"records", "batch"},
			Bases: []SweepBase{
				{Label: "best(up,copy)", Modes: []string{"upstream", "copy"}},
				{Label: "peek", Modes: []string{"peek"}},
			},
			// Below 48 B a record is a few words and its rate swings from
			// one size to the next with the loop's alignment, not a walk.
			FallsFrom: 48,
			StepSizes: 3,
			Stride:    recordStride,
		},
	}},
})

// sweepPlot are the benchplot arguments of the sweep's plot of touch.
func sweepPlot(touch, title string) []string {
	return []string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-series", "/mode@(" + strings.Join(sweepModes, " ") + ")",
		"-logx", "-logy", "-xticks", sweepXTicks, "-width", "11", "-height", "6.5", "-filter", ".name:Read /touch:" + touch,
		"-xlabel", "event size (B)", "-ylabel", "records drained (millions/s)", "-legend", "reader", "-title", title}
}

// recordStride is the bytes a record of size bytes takes in the ring: an
// 8-byte header, the sample, padded to 8 (kernel/bpf/ringbuf.c,
// round_up(len + BPF_RINGBUF_HDR_SZ, 8)).
func recordStride(size int) int { return (size + 8 + 7) &^ 7 }

// sweepCost is what one result of the sweep costs at benchtime, the
// untimed fills and go test's ramp included. The reference run
// (testdata/ringbuf/intel-xeon/sweep) took 3m43s for 3570 results at 5ms
// on the 2-vCPU Intel Xeon guest, 62 ms a result; a sweep at 10ms on its
// other vCPU took 1.67 times as long as at 5ms, which gives the slope.
// Make bench's drain cost (benchprogress.DrainCost) is fitted at 50ms and
// more, where go test's ramp costs a larger constant.
func sweepCost(s Setup) time.Duration { return 20*time.Millisecond + s.Benchtime*85/10 }
