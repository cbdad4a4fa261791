//go:build linux

package benchfamily

import (
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// sockfilter is make bench-sockfilter: a UDP server on [::1] against one
// good client and bad clients sending empty datagrams, with and without a
// socket filter that drops those in the kernel. Each of the 48 rows runs
// 2 s, so 6 rounds (about 10 minutes) are the fewest runs for which
// benchstat gives a confidence interval; the tables show that spread.
var _ = register(&Family{
	Name:      "sockfilter",
	What:      "a UDP server with and without a socket filter",
	Page:      "bench-sockfilter.md",
	Reference: "sockfilter/sockfilter.txt",
	Rounds:    6,
	RoundsEnv: "SOCKF_COUNT",
	Knobs: []benchknob.Knob{
		{Env: "SOCKF_BAD", Kind: benchknob.Ints, Default: "0,1,2,4", Doc: "bad clients per good client"},
		{Env: "SOCKF_PAYLOADS", Kind: benchknob.Ints, Default: "1,64,1024", Doc: "good payload sizes in bytes"},
		{Env: "SOCKF_DURATION", Kind: benchknob.Duration, Default: "2s", Doc: "how long the clients send per row"},
		{Env: "SOCKF_RECVS", Kind: benchknob.Ints, Default: "1,64",
			Doc: "datagrams per server receive call at most, one row each: 1 is a plain recv loop, 64 recvmmsg"},
	},
	Rig: []string{"internal/sockfilterbench", "internal/mmsg"},
	Runs: []Run{{
		Pkg: "./bench/", Bench: "BenchmarkSocketFilter", Benchtime: "1x",
		Benchmarks: []Benchmark{{
			Name: "BenchmarkSocketFilter",
			Dims: []Dim{Fixed(2, "filters"), KnobValues("SOCKF_BAD", "bad"), KnobValues("SOCKF_PAYLOADS", "payloads"), KnobValues("SOCKF_RECVS", "recvs")},
			Cost: func(Setup) time.Duration { return knobDuration("SOCKF_DURATION") + 50*time.Millisecond },
		}},
	}},
	Tables: []Table{{
		Heading: "filter on against off; one table per receive batch (recv), rows by good payload (B) and bad clients",
		Benchstat: []string{"-filter", ".name:SocketFilter .unit:(good-B/s OR good-lost-% OR reads/good OR ovfl-drops/s)",
			"-table", ".config,/recv", "-row", "/payload,/bad", "-col", "/filter@(off on)"},
	}},
	Plots: []Plot{{
		Suffix: "-recv1",
		Args: []string{"-kind", "bar", "-x", "/bad", "-y", "good-B/s", "-series", "/filter@(off on)", "-filter", ".name:SocketFilter /payload:1 /recv:1",
			"-xlabel", "bad clients per good one", "-ylabel", "useful throughput (B/s)", "-legend", "socket filter",
			"-title", "useful bytes/s, 1-byte good datagrams, server reading one per call"},
	}, {
		Suffix: "-recv64",
		Args: []string{"-kind", "bar", "-x", "/bad", "-y", "good-B/s", "-series", "/filter@(off on)", "-filter", ".name:SocketFilter /payload:1 /recv:64",
			"-xlabel", "bad clients per good one", "-ylabel", "useful throughput (B/s)", "-legend", "socket filter",
			"-title", "useful bytes/s, 1-byte good datagrams, server reading up to 64 per call"},
	}},
	Summary: []Section{{
		Title:     "Useful bytes/s with the socket filter on, as a multiple of off; rows by good\npayload (B) and bad clients per good one.",
		Bench:     "SocketFilter",
		Filter:    ".name:SocketFilter .unit:good-B/s",
		Table:     "/recv",
		Row:       "/payload,/bad",
		RowHeader: "payload bad",
		Key:       "/filter",
		Base:      "off",
	}},
})
