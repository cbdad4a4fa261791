//go:build linux

package benchfamily

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// rings is make bench-rings: ring buffer producers on every CPU at once,
// into one ring they share or a ring per CPU, then MultiReader against
// Reader (BenchmarkMultiRecords, runs of BENCHTIME). Both run in the
// same rounds, so both spread over the whole time: 6 (about 7 minutes),
// or 10 with FULL=1 as testdata/rings/multi.txt. Its tables compare
// shared against per-CPU and one producer against two; its plots show
// both beside the lock-contention projection to 8, 32 and 128 CPUs
// (internal/ringmodel, drawn by internal/tools/cmd/ringproject).
var _ = register(&Family{
	Name:       "rings",
	What:       "a shared ring against a ring per CPU, the projection to more CPUs, and MultiReader",
	Page:       "bench-rings.md",
	Reference:  "rings/rings.txt",
	Rounds:     6,
	FullRounds: 10,
	RoundsEnv:  "RINGS_COUNT",
	Knobs: []benchknob.Knob{
		{Env: "RINGS_SIZES", Kind: benchknob.Ints, Default: "16,128,1024", Doc: "event sizes in bytes"},
		{Env: "RINGS_PRODUCERS", Kind: benchknob.Ints, Default: "1, 2 and every CPU", Compute: ringsProducers,
			Doc: "how many CPUs produce at once, as far as there are CPUs; the projection needs 1 and 2"},
		{Env: "RINGS_RING", Kind: benchknob.Int, Default: "16777216", Doc: "bytes of all rings together: the shared ring's size, split over the CPUs for per-CPU rings"},
		{Env: "RINGS_BENCHTIME", Kind: benchknob.Duration, Default: "1s", Doc: "the -benchtime of BenchmarkRings (BENCHTIME where this is unset)"},
		{Env: "RINGS_PLOT_SIZE", Kind: benchknob.Int, Default: "128", Doc: "the event size the plots show, with NO_WAKEUP"},
	},
	Rig: []string{"internal/ringsbench", "internal/ringmodel", "internal/readloop"},
	Runs: []Run{{
		Pkg: "./bench/", Bench: "BenchmarkRings$", BenchtimeEnv: "RINGS_BENCHTIME",
		Benchmarks: []Benchmark{{
			Name: "BenchmarkRings",
			Dims: []Dim{Fixed(2, "layouts"), KnobValues("RINGS_PRODUCERS", "producer counts"), KnobValues("RINGS_SIZES", "sizes"), Fixed(2, "flags")},
			Cost: func(s Setup) time.Duration { return 600*time.Millisecond + 2*s.Benchtime },
		}},
	}, {
		Pkg: "./ringbuf/", Bench: "BenchmarkMultiRecords$", BenchtimeEnv: "BENCHTIME", Pin: true, Benchmem: true,
		Benchmarks: []Benchmark{{
			Name: "BenchmarkMultiRecords",
			Dims: []Dim{Fixed(2, "sizes"), Fixed(4, "readers")},
			Cost: func(s Setup) time.Duration { return 200*time.Millisecond + 8*s.Benchtime },
		}},
	}},
	Tables: []Table{
		{Heading: "per-CPU rings against a shared ring; ns/event is a producer thread's CPU time per event",
			Benchstat: []string{"-filter", ".name:Rings .unit:(ns/event OR Mevents/s)", "-row", "/producers,/size,/flags", "-col", "/layout@(shared percpu)"}},
		{Heading: "loss: the rings are drained before they fill, so any loss is listed here", Check: listLosses("BenchmarkRings")},
		{Heading: "the shared ring: two producers contending against one alone",
			Benchstat: []string{"-filter", ".name:Rings /layout:shared .unit:(ns/event OR Mevents/s)", "-row", "/size,/flags", "-col", "/producers"}},
		{Heading: "reading: MultiReader.Records against Reader.Records over one ring, then over 1, 2 and 4 rings of the same total size",
			Benchstat: []string{"-filter", ".name:MultiRecords /rings:1 .unit:(ns/op OR Mrec/s)", "-row", "/size", "-col", "/reader@(Reader MultiReader)"}},
		{Benchstat: []string{"-filter", ".name:MultiRecords /reader:MultiReader .unit:(ns/op OR Mrec/s)", "-row", "/size", "-col", "/rings@(1 2 4)"}},
	},
	Derive: []Derive{{Suffix: "-projection.txt", Tool: []string{"ringproject", "-producers", "1,2,8,32,128"}}},
	Plots: []Plot{{
		Suffix: "-ns", With: []string{"-projection.txt"},
		Args: []string{"-kind", "line", "-x", "/producers", "-y", "ns/event", "-series", "/layout", "-logx", "-logy", "-filter", ".name:Rings /size:${RINGS_PLOT_SIZE} /flags:no_wakeup",
			"-xlabel", "producer CPUs (count)", "-ylabel", "CPU time per event, per producer (ns)", "-legend", "layout",
			"-title", "producer CPU time per ${RINGS_PLOT_SIZE}-byte event, NO_WAKEUP (-projection: the model)"},
	}, {
		Suffix: "-rate", With: []string{"-projection.txt"},
		Args: []string{"-kind", "line", "-x", "/producers", "-y", "Mevents/s", "-series", "/layout", "-logx", "-logy", "-filter", ".name:Rings /size:${RINGS_PLOT_SIZE} /flags:no_wakeup",
			"-xlabel", "producer CPUs (count)", "-ylabel", "events placed, all producers (M/CPU-s)", "-legend", "layout",
			"-title", "events placed, ${RINGS_PLOT_SIZE}-byte events, NO_WAKEUP (-projection: the model)"},
	}},
	Summary: []Section{{
		Title:     "Producer CPU per event with a ring per CPU, as a multiple of one shared\nring (lower is better); rows by producers, size (B) and flags.",
		Bench:     "Rings",
		Filter:    ".name:Rings .unit:ns/event",
		Row:       "/producers,/size,/flags",
		RowHeader: "producers size flags",
		Key:       "/layout",
		Base:      "shared",
	}, {
		Title:     "Reading: MultiReader over 2 and 4 rings against 1 ring of the same total.",
		Bench:     "MultiRecords",
		Filter:    ".name:MultiRecords /reader:MultiReader .unit:Mrec/s",
		Row:       "/size",
		RowHeader: "size B",
		Key:       "/rings",
		Base:      "1",
	}},
})

// ringsProducers is RINGS_PRODUCERS' default: 1, 2 and every CPU, as far
// as there are CPUs.
func ringsProducers() string {
	cpus := runtime.NumCPU()
	var counts []string
	for _, n := range []int{1, 2, cpus} {
		if s := strconv.Itoa(n); n <= cpus && !slices.Contains(counts, s) {
			counts = append(counts, s)
		}
	}
	return strings.Join(counts, ",")
}
