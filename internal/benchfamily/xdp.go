//go:build linux

package benchfamily

import (
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// xdpStrategies is how many consumer strategies (xdpbench.Strategies)
// BenchmarkXDP runs: a count, so that the description links no rig;
// TestRigNames checks it.
const xdpStrategies = 14

// xdpUnits are the units of the XDP tables that compare strategies.
// Neither ring buffer reader loses packets at 80,000/s, so lost-% would
// be a table of zeros; delivered-pps shows a loss if there is one.
const xdpUnits = ".unit:(delivered-pps OR p99-us OR cons-ms/s OR cpu-ms/Mpkt)"

// xdp is make bench-xdp: XDP packets to user space under real veth
// traffic, one row per consumer strategy, and a loss sweep. Each of the
// 22 rows runs 5 s, so 6 rounds (about 11 minutes) are the fewest runs
// for which benchstat gives a confidence interval; its tables show that
// spread, xdptable the medians.
var _ = register(&Family{
	Name:      "xdp",
	What:      "XDP to user space under real traffic, a row per consumer strategy, and a loss sweep",
	Page:      "bench-xdp.md",
	Reference: "xdp/xdp.txt",
	Rounds:    6,
	RoundsEnv: "XDP_COUNT",
	Knobs: []benchknob.Knob{
		{Env: "XDP_PPS", Kind: benchknob.Int, Default: "80000", Doc: "offered packets per second, 0 floods"},
		{Env: "XDP_DURATION", Kind: benchknob.Duration, Default: "5s", Doc: "traffic per row"},
		{Env: "XDP_PAYLOAD", Kind: benchknob.Int, Default: "128", Doc: "UDP payload bytes (128: 170-byte frames)"},
		{Env: "XDP_SENDERS", Kind: benchknob.Int, Default: "2", Doc: "flood goroutines"},
		{Env: "XDP_SENDER_CPUS", Kind: benchknob.Ints, Default: "0", Doc: "CPUs the senders, and so the XDP program, run on"},
		{Env: "XDP_CONSUMER_CPU", Kind: benchknob.Int, Default: "-1", Doc: "CPU the consumer runs on (-1: the last)"},
		{Env: "XDP_RING", Kind: benchknob.Int, Default: "1048576", Doc: "ring buffer bytes"},
		{Env: "XDP_PERF_BUF", Kind: benchknob.Int, Default: "0", Doc: "perf buffer bytes per CPU (0: XDP_RING / CPUs)"},
		{Env: "XDP_MODE", Kind: benchknob.Text, Default: "", Doc: "native, generic, or empty for native then generic"},
		{Env: "XDP_LOSS_PPS", Kind: benchknob.Ints, Default: "120000,140000,160000,200000", Doc: "offered rates of the loss sweep"},
		{Env: "XDP_LOSS_SENDER_CPUS", Kind: benchknob.Ints, Default: "0,1", Doc: "sender CPUs of the loss sweep"},
	},
	Rig: []string{"internal/xdpbench", "internal/xdpflood", "internal/netns", "internal/mmsg", "internal/readloop"},
	Runs: []Run{{
		Pkg: "./bench/", Bench: "BenchmarkXDP", Benchtime: "1x",
		Benchmarks: []Benchmark{{
			Name: "BenchmarkXDP",
			Dims: []Dim{Fixed(xdpStrategies, "strategies")},
			Cost: func(Setup) time.Duration { return knobDuration("XDP_DURATION") + 100*time.Millisecond },
		}, {
			Name: "BenchmarkXDPLoss",
			Dims: []Dim{KnobValues("XDP_LOSS_PPS", "rates"), Fixed(2, "strategies")},
			Cost: func(Setup) time.Duration { return knobDuration("XDP_DURATION") + 100*time.Millisecond },
		}},
	}},
	Tables: []Table{
		{Tool: []string{"xdptable", "-in"}},
		{Heading: "our Records against upstream's ReadInto, both on epoll",
			Benchstat: []string{"-filter", ".name:XDP " + xdpUnits, "-row", ".name", "-col", "/strategy@(rb-epoll-upstream rb-epoll)"}},
		{Heading: "our Records against upstream's ReadInto, both sleeping 50 us when the ring is empty",
			Benchstat: []string{"-filter", ".name:XDP " + xdpUnits, "-row", ".name", "-col", "/strategy@(rb-sleep-50us-upstream rb-sleep-50us)"}},
		{Heading: "perf + epoll: our perf Records against cilium/ebpf's perf ReadInto, the same wake-ups",
			Benchstat: []string{"-filter", ".name:XDP " + xdpUnits, "-row", ".name", "-col", "/strategy@(perf-epoll perf-epoll-records)"}},
		{Heading: "loss sweep: ring buffer against perf, rows by offered packets/s",
			Benchstat: []string{"-filter", ".name:XDPLoss .unit:(delivered-pps OR e2e-lost-% OR lost-% OR p99-us OR cpu-ms/Mpkt)", "-row", "/pps", "-col", "/strategy@(perf-epoll rb-epoll)"}},
	},
	Plots: []Plot{{
		Args: []string{"-kind", "scatter", "-x", "cons-ms/s", "-y", "p99-us", "-series", "/strategy", "-logx", "-logy", "-filter", ".name:XDP -/strategy:baseline",
			"-xlabel", "consumer CPU (ms per s)", "-ylabel", "p99 latency, capture to consumer (µs)", "-legend", "consumer strategy",
			"-title", "XDP to user space: p99 latency against consumer CPU"},
	}},
	Summary: []Section{{
		Title:     "Our Records against upstream's ReadInto, same consumer strategy.",
		Filter:    ".name:XDP .unit:(delivered-pps OR p99-us OR cons-ms/s)",
		Row:       ".name",
		RowHeader: "unit",
		Key:       "/strategy",
		// Each strategy against its -upstream twin.
		Columns: func(v Values) []Column {
			var pairs []Column
			for _, ours := range v["XDP"]["strategy"] {
				if base := ours + "-upstream"; v.Has("XDP", "strategy", base) {
					pairs = append(pairs, Column{Mode: ours, Base: base})
				}
			}
			return pairs
		},
		UnitRows:  true,
		BaseNames: map[string]string{"rb-epoll-upstream": "upstream", "rb-sleep-50us-upstream": "upstream"},
	}, {
		Title:     "Loss sweep: packets delivered, ring buffer against perf, by offered rate.",
		Bench:     "XDPLoss",
		Filter:    ".name:XDPLoss .unit:delivered-pps",
		Row:       "/pps",
		RowHeader: "pps",
		Key:       "/strategy",
		Base:      "perf-epoll",
	}},
})
