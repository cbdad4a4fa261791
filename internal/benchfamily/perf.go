//go:build linux

package benchfamily

import (
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// perfModeNames are the perf drain's modes (internal/perfdrain.Modes),
// as names so that the description links no rig; TestRigNames checks
// them. perfModes shows them in that order in the tables and plots.
var (
	perfModeNames = []string{"upstream", "copy", "records", "batch"}
	perfModes     = "/mode@(" + strings.Join(perfModeNames, " ") + ")"
)

// perf is make bench-perf: the perf event array drain (perf/bench_test.go),
// cilium/ebpf's perf ReadInto against ours, our Records and our Batches,
// both touches, every reader with a watermark of half its buffer, pinned
// as make bench is. About COUNT minutes on a 2-vCPU guest.
var _ = register(&Family{
	Name:       "perf",
	What:       "the perf event array drain: cilium/ebpf's perf ReadInto against ours, our Records and our Batches",
	Page:       "bench-perf.md",
	Reference:  "perf/read.txt",
	Rounds:     6,
	FullRounds: 10,
	Knobs: []benchknob.Knob{
		{Env: "PERF_BENCH_SIZES", Kind: benchknob.Sizes, Default: benchknob.DefaultSizes, Alias: "PERF_SIZES",
			Doc: "event sizes in bytes"},
		{Env: "PERF_BENCH_BUFFER", Kind: benchknob.Int, Default: "16777216", Alias: "PERF_BUFFER",
			Doc: "per-CPU buffer bytes; every reader's watermark is half of it"},
		{Env: "PERF_BENCHTIME", Kind: benchknob.Duration, Default: "100ms",
			Doc: "the -benchtime of each run (BENCHTIME where this is unset)"},
	},
	Rig: []string{"internal/perfdrain", "internal/drainloop", "internal/rawring"},
	Runs: []Run{{
		Pkg: "./perf/", Bench: "BenchmarkRead$", BenchtimeEnv: "PERF_BENCHTIME", Pin: true, Benchmem: true,
		Benchmarks: []Benchmark{{
			Name: "BenchmarkRead",
			Dims: []Dim{
				KnobValues("PERF_BENCH_SIZES", "sizes"),
				Fixed(len(perfModeNames), "modes"),
				Fixed(2, "touches"),
			},
			// The fills of a 16 MiB buffer per CPU, untimed, and the ramp.
			Cost: func(s Setup) time.Duration { return 500*time.Millisecond + 6*s.Benchtime },
		}},
	}},
	Tables: []Table{
		{Heading: "perf drain rate of every mode against cilium/ebpf's perf ReadInto, one table per touch variant",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", "/touch", "-row", "/size", "-col", perfModes}},
		{Heading: "records against our ReadInto",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", "/touch", "-row", "/size", "-col", "/mode@(copy records)"}},
		{Heading: "batch against records",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", "/touch", "-row", "/size", "-col", "/mode@(records batch)"}},
	},
	Plots: []Plot{{
		Suffix: "-head",
		Args: []string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-series", perfModes, "-logx", "-logy", "-filter", ".name:Read /touch:head",
			"-xlabel", "event size (B)", "-ylabel", "records drained (millions/s)", "-legend", "reader",
			"-title", "perf buffer drain rate, consumer reads 8 bytes of each record (touch=head)"},
	}, {
		Suffix: "-all",
		Args: []string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-series", perfModes, "-logx", "-logy", "-filter", ".name:Read /touch:all",
			"-xlabel", "event size (B)", "-ylabel", "records drained (millions/s)", "-legend", "reader",
			"-title", "perf buffer drain rate, consumer reads every byte (touch=all)"},
	}},
	Summary: []Section{{
		Title:     "Perf drain rate (Mrec/s) as a multiple of the mode under /: up is cilium/ebpf\nv0.22's perf ReadInto, copy our ReadInto; rows by event size.",
		Filter:    ".name:Read .unit:Mrec/s",
		Table:     "/touch",
		Row:       "/size",
		RowHeader: "size B",
		Key:       "/mode",
		// Each of our modes against upstream's ReadInto, then Records
		// against our ReadInto and Batches against Records: what a view
		// saves over a copy, and what a loop body a batch saves over one a
		// record.
		Columns: func(v Values) []Column {
			var cols []Column
			if v.Has("Read", "mode", "upstream") {
				for _, m := range v["Read"]["mode"] {
					if m != "upstream" {
						cols = append(cols, Column{Mode: m, Base: "upstream"})
					}
				}
			}
			for _, c := range []Column{{Mode: "records", Base: "copy"}, {Mode: "batch", Base: "records"}} {
				if v.Has("Read", "mode", c.Mode) && v.Has("Read", "mode", c.Base) {
					cols = append(cols, c)
				}
			}
			return cols
		},
		BaseNames: map[string]string{"upstream": "up"},
	}},
})
