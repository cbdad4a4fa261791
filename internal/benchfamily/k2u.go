//go:build linux

package benchfamily

import (
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// How many producer cases (transportbench.ProducerCases) and end-to-end
// readers (transportbench.EndToEndCases) the k2u rig runs: counts, so
// that the description links no rig; TestRigNames checks them.
const (
	k2uProducerCases = 10
	k2uReaderCases   = 9
)

// The k2u tables' and plots' columns.
const (
	// k2uProducers: the base first (reserve + submit without a wakeup),
	// then every other helper and flag at the same size.
	k2uProducers = "/helper@(ringbuf_reserve ringbuf_output perf_event_output map_push_elem),/flags@(no_wakeup 0 force_wakeup current_cpu_no_reader current_cpu_watermark current_cpu)"
	// k2uReaders: upstream's ring buffer reader is the base every row
	// has; perf and queue readers each stand for their transport.
	k2uReaders = "/reader@(upstream-readinto records readinto perf-readinto perf-records perf-readinto-wm perf-records-wm lookup-delete batch-lookup-delete)"
	// The perf tables: cilium/ebpf's perf reader against our Records,
	// waking on every event, then both with the same watermark.
	k2uPerfEach    = "/reader@(perf-readinto perf-records)"
	k2uPerfWM      = "/reader@(perf-readinto-wm perf-records-wm)"
	k2uPerfReaders = "/reader@(perf-readinto perf-records perf-readinto-wm perf-records-wm)"
	k2uE2EUnits    = ".unit:(events/s OR lost-% OR cons-ms/Mevent)"
)

// k2u is make bench-k2u: kernel-to-user transports, perf event array,
// ring buffer and queue map. The producer's cost per event (net of an
// empty program), then end to end with a pinned producer and consumer.
// 10 rounds by default, every row once a round: about 25 minutes.
var _ = register(&Family{
	Name:      "k2u",
	What:      "perf, ring buffer and queue: producer cost and end to end",
	Page:      "bench-k2u.md",
	Reference: "k2u/k2u.txt",
	Rounds:    10,
	RoundsEnv: "K2U_COUNT",
	Knobs: []benchknob.Knob{
		{Env: "K2U_SIZES", Kind: benchknob.Ints, Default: "16,80,256,1024,4096", Doc: "event sizes of the producer sweep"},
		{Env: "K2U_E2E_SIZES", Kind: benchknob.Ints, Default: "80,1024", Doc: "event sizes end to end"},
		{Env: "K2U_DURATION", Kind: benchknob.Duration, Default: "1s", Doc: "how long each end-to-end row produces"},
		{Env: "K2U_RATES", Kind: benchknob.Ints, Default: "0,100000,1000000",
			Doc: "end to end: producer rates in events/s, 0 for flat out; at a fixed rate every reader delivers the same events, so their CPU compares"},
		{Env: "K2U_RING", Kind: benchknob.Int, Default: "33554432", Doc: "end to end: ring buffer bytes; perf gets as much in all, split over the CPUs"},
		{Env: "K2U_QUEUE", Kind: benchknob.Int, Default: "65536", Doc: "end to end: queue entries"},
	},
	Rig: []string{"internal/transportbench", "internal/readloop"},
	Runs: []Run{{
		Pkg: "./bench/", Bench: "BenchmarkProducer$|BenchmarkK2U$",
		Benchmarks: []Benchmark{{
			Name: "BenchmarkProducer",
			Dims: []Dim{
				Fixed(k2uProducerCases, "cases"),
				KnobValues("K2U_SIZES", "sizes"),
			},
			Cost: func(Setup) time.Duration { return 1900 * time.Millisecond },
		}, {
			Name: "BenchmarkK2U",
			Dims: []Dim{
				Fixed(k2uReaderCases, "readers"),
				KnobValues("K2U_E2E_SIZES", "sizes"),
				KnobValues("K2U_RATES", "rates"),
			},
			Cost: func(Setup) time.Duration { return knobDuration("K2U_DURATION") + 500*time.Millisecond },
		}},
	}},
	Tables: []Table{
		{Heading: "producer: ns per event net of an empty program, and ms per 9,999,999 runs (the published unit), against reserve + submit with BPF_RB_NO_WAKEUP at the same size",
			Benchstat: []string{"-filter", ".name:Producer .unit:(net-ns/op OR ms/9999999runs)", "-row", "/size", "-col", k2uProducers}},
		{Heading: "end to end, rows by event size (B) and producer rate (events/s), against upstream's ring buffer ReadInto",
			Benchstat: []string{"-filter", ".name:K2U " + k2uE2EUnits, "-row", "/size,/rate", "-col", k2uReaders}},
		{Heading: "end to end, perf only: cilium/ebpf's perf reader against our Records, per-event wakeups and a watermark of a quarter buffer",
			Benchstat: []string{"-filter", ".name:K2U /transport:perf " + k2uE2EUnits, "-row", "/size,/rate", "-col", k2uPerfEach}},
		{Benchstat: []string{"-filter", ".name:K2U /transport:perf " + k2uE2EUnits, "-row", "/size,/rate", "-col", k2uPerfWM}},
	},
	Plots: []Plot{{
		Suffix: "-producer",
		Args: []string{"-kind", "bar", "-x", "/helper", "-y", "net-ns/op", "-series", "/flags", "-logy", "-filter", ".name:Producer /size:80",
			"-xlabel", "BPF helper", "-ylabel", "cost per event, net of an empty program (ns)", "-legend", "flags",
			"-title", "producer cost per 80-byte event"},
	}, {
		Suffix: "-e2e",
		Args: []string{"-kind", "bar", "-x", k2uReaders, "-y", "events/s", "-series", "/size", "-logy", "-filter", ".name:K2U /rate:max",
			"-xlabel", "reader", "-ylabel", "events delivered (per s)", "-legend", "event size (B)",
			"-title", "events delivered to user space, producer flat out"},
	}, {
		Suffix: "-cpu",
		Args: []string{"-kind", "bar", "-x", k2uReaders, "-y", "cons-ms/Mevent", "-series", "/size", "-logy", "-filter", ".name:K2U /rate:1000000",
			"-xlabel", "reader", "-ylabel", "consumer CPU per million events (ms)", "-legend", "event size (B)",
			"-title", "consumer CPU per million events, 1M events/s offered"},
	}, {
		Suffix: "-perf-cpu",
		Args: []string{"-kind", "bar", "-x", k2uPerfReaders, "-y", "cons-ms/Mevent", "-series", "/size", "-logy", "-filter", ".name:K2U /transport:perf /rate:1000000",
			"-xlabel", "reader", "-ylabel", "consumer CPU per million events (ms)", "-legend", "event size (B)",
			"-title", "perf: consumer CPU per million events, 1M events/s offered"},
	}},
	Summary: []Section{{
		Title:     "Events delivered per second, producer flat out, as a multiple of upstream's\nring buffer ReadInto (up).",
		Bench:     "K2U",
		Filter:    ".name:K2U /rate:max .unit:events/s",
		Row:       "/size",
		RowHeader: "size B",
		Key:       "/reader",
		Base:      "upstream-readinto",
		Order:     k2uSummaryOrder,
		BaseNames: k2uNames,
	}, {
		Title:     "Consumer CPU per million events at 1M events/s offered (lower is better).",
		Bench:     "K2U",
		Filter:    ".name:K2U /rate:1000000 .unit:cons-ms/Mevent",
		Row:       "/size",
		RowHeader: "size B",
		Key:       "/reader",
		Base:      "upstream-readinto",
		Order:     k2uSummaryOrder,
		BaseNames: k2uNames,
	}},
})

var (
	k2uSummaryOrder = []string{"records", "readinto", "perf-readinto", "lookup-delete", "batch-lookup-delete"}
	k2uNames        = map[string]string{
		"upstream-readinto": "up", "perf-readinto": "perf", "lookup-delete": "queue",
		"batch-lookup-delete": "queue-b", "readinto": "readinto", "records": "records",
	}
)
