//go:build linux

package benchfamily

import (
	"slices"
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
	"github.com/ebpf-zc/ebpf/internal/benchprogress"
)

// ringbuf is make bench: the ring buffer drain, every mode and both
// touch variants, the end-to-end benchmark, and the writer's (not pinned:
// its two-goroutine modes need two CPUs). By default 4 sizes and 6
// rounds of 50ms runs, about 3 minutes of benchmarks, under 5 from a
// fresh clone; FULL=1 is the reference run docs/bench-ringbuf.md's tables
// come from: the 8 default sizes and 10 rounds. Its runs are BENCHTIME of
// timed drain; the untimed fills cost about five times as much, so 50ms
// of draining is about 0.4 s a result.
var _ = register(&Family{
	Name:       "ringbuf",
	Alias:      "bench",
	What:       "the ring buffer drain, every reader against cilium/ebpf, libbpf and a Go floor; end to end; the writer",
	Page:       "bench-ringbuf.md",
	Reference:  "ringbuf/read.txt",
	Rounds:     6,
	FullRounds: 10,
	Knobs: []benchknob.Knob{
		{Env: "RINGBUF_BENCH_SIZES", Kind: benchknob.Sizes, Default: benchknob.DefaultSizes, Target: "16,128,1024,4096", Alias: "SIZES",
			Doc: "event sizes in bytes, or sweep for 80..2048 by 16; make bench takes 4 (16,128,1024,4096) unless FULL=1"},
		{Env: "RINGBUF_BENCH_RING", Kind: benchknob.Int, Default: "268435456", Target: "67108864", Alias: "RING",
			Doc: "ring buffer bytes of the drain (make bench: 64 MiB)"},
		{Env: "RINGBUF_WRITE_RING", Kind: benchknob.Int, Default: "4194304",
			Doc: "user ring buffer bytes of BenchmarkWrite: small enough to stay in the cache"},
	},
	Rig: []string{"internal/drainbench", "internal/drainbench/ours", "internal/drainloop", "internal/rawring", "internal/libbpfdrain", "internal/libbpfwrite"},
	Runs: []Run{{
		Pkg: "./ringbuf/", Bench: "BenchmarkRead$|BenchmarkEndToEnd$", BenchtimeEnv: "BENCHTIME", Pin: true, Libbpf: true, Benchmem: true,
		Benchmarks: []Benchmark{{
			Name: "BenchmarkRead",
			Dims: []Dim{
				KnobValues("RINGBUF_BENCH_SIZES", "sizes"),
				// upstream, ours, floor, lease, lease-each, and libbpf where built.
				List("modes", func(s Setup) int { return len(drainOurs) + len(drainOthers) + libbpfMode(s) }),
				Fixed(2, "touches"),
			},
			Cost: func(s Setup) time.Duration { return benchprogress.DrainCost(s.Benchtime) },
		}, {
			Name: "BenchmarkEndToEnd",
			Dims: []Dim{Fixed(3, "sizes"), Fixed(2, "wakeups")},
			Cost: func(s Setup) time.Duration { return benchprogress.DrainCost(s.Benchtime) },
		}},
	}, {
		Pkg: "./ringbuf/", Bench: "BenchmarkWrite$", BenchtimeEnv: "BENCHTIME", Libbpf: true, Benchmem: true,
		Benchmarks: []Benchmark{{
			Name: "BenchmarkWrite",
			Dims: []Dim{
				KnobValues("RINGBUF_BENCH_SIZES", "sizes"),
				// reserve, write, reserve-x2, batch, batch-x2, and libbpf where built.
				List("modes", func(s Setup) int { return 5 + libbpfMode(s) }),
			},
			// The ramp to -benchtime, a 4 MiB ring and a program each.
			Cost: func(s Setup) time.Duration { return 20*time.Millisecond + 4*s.Benchtime },
		}},
	}},
	Tables: []Table{
		{Heading: "drain rate of every mode against the first (upstream), one table per touch variant",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", ".config,/touch", "-row", "/size", "-col", "/mode"}},
		{Heading: "records against copy",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", ".config,/touch", "-row", "/size", "-col", "/mode@(copy records)"}},
		{Heading: "records against cilium/ebpf main's lease technique, the floor and libbpf",
			Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", ".config,/touch", "-row", "/size", "-col", "/mode@(lease records)"}},
		{Benchstat: []string{"-filter", ".name:Read .unit:Mrec/s", "-table", ".config,/touch", "-row", "/size", "-col", "/mode@(libbpf records)"}},
		{Heading: "end to end: Records with wakeups against NO_WAKEUP and polling",
			Benchstat: []string{"-filter", ".name:EndToEnd .unit:(Mrec/s OR full-%)", "-row", "/size", "-col", "/wake@(wakeup poll)"}},
		{Heading: "user ring buffer writer: Reserve/Submit, Write and ReserveBatch against libbpf, two goroutines against one",
			Benchstat: []string{"-filter", ".name:Write .unit:Mrec/s", "-row", "/size", "-col", "/mode@(libbpf reserve write batch)"}},
		{Benchstat: []string{"-filter", ".name:Write .unit:Mrec/s", "-row", "/size", "-col", "/mode@(reserve reserve-x2)"}},
		{Benchstat: []string{"-filter", ".name:Write .unit:Mrec/s", "-row", "/size", "-col", "/mode@(batch batch-x2)"}},
		{Heading: "the writer's own cost, the kernel's drain left out (write-ns/rec: lower is better)",
			Benchstat: []string{"-filter", ".name:Write .unit:write-ns/rec", "-row", "/size", "-col", "/mode@(libbpf reserve write batch)"}},
		{Benchstat: []string{"-filter", ".name:Write .unit:write-ns/rec", "-row", "/size", "-col", "/mode@(reserve reserve-x2)"}},
		{Benchstat: []string{"-filter", ".name:Write .unit:write-ns/rec", "-row", "/size", "-col", "/mode@(batch batch-x2)"}},
		{Heading: "allocations (-benchmem); benchstat's tables of them would be all zero", Check: noAllocs},
	},
	Plots: []Plot{{
		Suffix: "-head",
		Args: []string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-series", "/mode", "-logx", "-logy", "-filter", ".name:Read /touch:head",
			"-xlabel", "event size (B)", "-ylabel", "records drained (millions/s)", "-legend", "reader",
			"-title", "ring buffer drain rate, consumer reads 8 bytes of each record (touch=head)"},
	}, {
		Suffix: "-all",
		Args: []string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-series", "/mode", "-logx", "-logy", "-filter", ".name:Read /touch:all",
			"-xlabel", "event size (B)", "-ylabel", "records drained (millions/s)", "-legend", "reader",
			"-title", "ring buffer drain rate, consumer reads every byte (touch=all)"},
	}, {
		Suffix: "-write", If: "Write",
		Args: []string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-series", "/mode", "-logx", "-filter", ".name:Write",
			"-xlabel", "record size (B)", "-ylabel", "records written and drained (millions/s)", "-legend", "writer",
			"-title", "user ring buffer: records written, then drained by a BPF program"},
	}},
	Summary: append(DrainSections("Read"), Section{
		Title:     "User ring buffer writer, records written then drained (Mrec/s): Reserve/Submit,\nWrite and ReserveBatch against libbpf's reserve/submit, two goroutines against one.",
		Bench:     "Write",
		Filter:    ".name:Write .unit:Mrec/s",
		Row:       "/size",
		RowHeader: "size B",
		Key:       "/mode",
		Columns: func(v Values) []Column {
			var cols []Column
			for _, c := range []Column{{Mode: "reserve", Base: "libbpf"}, {Mode: "write", Base: "libbpf"}, {Mode: "reserve-x2", Base: "reserve"}, {Mode: "batch", Base: "libbpf"}, {Mode: "batch-x2", Base: "batch"}} {
				if v.Has("Write", "mode", c.Mode) && v.Has("Write", "mode", c.Base) {
					cols = append(cols, c)
				}
			}
			return cols
		},
	}, Section{
		Title:     "End to end, Records: polling (NO_WAKEUP) against a wakeup a record.",
		Bench:     "EndToEnd",
		Filter:    ".name:EndToEnd .unit:Mrec/s",
		Row:       "/size",
		RowHeader: "size B",
		Key:       "/wake",
		Columns:   func(Values) []Column { return []Column{{Mode: "poll", Base: "wakeup"}} },
	}),
})

// BenchmarkRead's modes (ringbuf/bench_test.go) beside libbpf, which
// depends on the build: ours (internal/drainbench/ours) and the others.
// Names, not the rig's values, so that no library's test binary links
// another family's rig through the descriptions; TestRigNames checks
// them against the rig.
var (
	drainOurs   = []string{"copy", "peek", "records", "batch"}
	drainOthers = []string{"upstream", "floor", "lease", "lease-each"}
)

// libbpfMode is 1 where the libbpf peer is built.
func libbpfMode(s Setup) int {
	if s.Libbpf {
		return 1
	}
	return 0
}

// drainReferences are the drain benchmark's modes that are not our
// reader (bench-upstream's lease-batch among them); every other mode in
// the results is ours.
var drainReferences = []string{"upstream", "lease", "lease-batch", "lease-each", "floor", "libbpf"}

// DrainSections summarize the ring drain benchmark bench (Read, or Drain
// for bench-upstream's): each of our modes against upstream's ReadInto,
// then records (and any of our modes beyond copy and peek, such as
// batch) against the lease technique, the floor and libbpf.
func DrainSections(bench string) []Section {
	return []Section{{
		Title:     "Drain rate (Mrec/s) as a multiple of the mode under /: upstream is cilium/ebpf\nv0.22's ReadInto; lease its main branch's technique; floor the fastest Go loop.",
		Filter:    ".name:" + bench + " .unit:Mrec/s",
		Table:     "/touch",
		Row:       "/size",
		RowHeader: "size B",
		Key:       "/mode",
		Columns:   func(v Values) []Column { return drainColumns(v, bench) },
		BaseNames: map[string]string{"upstream": "up", "lease-each": "lease-e", "lease-batch": "lease-b"},
		Verdict:   AgainstReferences,
	}}
}

func drainColumns(v Values, bench string) []Column {
	var ours []string
	for _, m := range v[bench]["mode"] {
		if !slices.Contains(drainReferences, m) {
			ours = append(ours, m)
		}
	}
	has := func(m string) bool { return v.Has(bench, "mode", m) }
	var cols []Column
	if has("upstream") {
		for _, m := range ours {
			cols = append(cols, Column{Mode: m, Base: "upstream"})
		}
	}
	for _, m := range ours {
		if m == "copy" || m == "peek" {
			continue
		}
		for _, base := range []string{"lease", "lease-batch", "floor", "libbpf"} {
			if has(base) && (m == "records" || !strings.HasPrefix(base, "lease")) {
				cols = append(cols, Column{Mode: m, Base: base})
			}
		}
		// Zero-copy against the copy it replaces: in the verdict only,
		// for the table to fit 80 columns.
		if has("copy") {
			cols = append(cols, Column{Mode: m, Base: "copy", Hidden: true})
		}
	}
	return cols
}
