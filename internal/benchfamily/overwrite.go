//go:build linux

package benchfamily

import (
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// overwrite is make bench-overwrite: the cost of one snapshot of a full
// overwrite-mode ring buffer (ringbuf.SnapshotReader, BPF_F_RB_OVERWRITE,
// Linux 6.19+) against the ring's size, for two record sizes
// (BenchmarkOverwriteSnapshot, runs of OVERWRITE_BENCHTIME). The ring is
// refilled outside the timer before each snapshot, so a row's wall time
// is several times its benchtime: 6 rounds take about 3 minutes. On a
// kernel without the flag every row skips and says so. Not part of make
// bench.
var _ = register(&Family{
	Name:      "overwrite",
	What:      "a snapshot of a full overwrite-mode ring against the ring's size",
	Page:      "bench-overwrite.md",
	Rounds:    6,
	RoundsEnv: "OVERWRITE_COUNT",
	Knobs: []benchknob.Knob{
		{Env: "OVERWRITE_RINGS", Kind: benchknob.Ints, Default: "4096,65536,1048576,16777216", Doc: "ring sizes in bytes, each a power-of-two number of pages"},
		{Env: "OVERWRITE_RECORDS", Kind: benchknob.Ints, Default: "56,248", Doc: "record payload sizes in bytes, multiples of 8 of at least 16 (64 and 256 bytes in the ring)"},
		{Env: "OVERWRITE_BENCHTIME", Kind: benchknob.Duration, Default: "1s", Doc: "the -benchtime of BenchmarkOverwriteSnapshot, timed snapshots only (BENCHTIME where this is unset)"},
	},
	Runs: []Run{{
		Pkg: "./bench/", Bench: "BenchmarkOverwriteSnapshot$", BenchtimeEnv: "OVERWRITE_BENCHTIME", Pin: true, Benchmem: true,
		Benchmarks: []Benchmark{{
			Name: "BenchmarkOverwriteSnapshot",
			Dims: []Dim{KnobValues("OVERWRITE_RINGS", "ring sizes"), KnobValues("OVERWRITE_RECORDS", "record sizes")},
			// The refills outside the timer cost about as much again as
			// the timed snapshots, and more for small records.
			Cost: func(s Setup) time.Duration { return 200*time.Millisecond + 3*s.Benchtime },
		}},
	}},
	Tables: []Table{{
		Heading:   "one snapshot of a full ring: time, time per record, bytes copied per second; rows by record size (B), columns by ring size (B)",
		Benchstat: []string{"-filter", ".name:OverwriteSnapshot .unit:(sec/op OR ns/record OR B/s)", "-row", "/record", "-col", "/ring"},
	}, {
		Heading:   "allocations: B/op is the reader's copy growing to the ring's size; a snapshot itself allocates nothing (TestSnapshotAllocs)",
		Benchstat: []string{"-filter", ".name:OverwriteSnapshot .unit:(allocs/op OR B/op)", "-row", "/record", "-col", "/ring"},
	}},
	Summary: []Section{{
		Title:     "Time per record of a full-ring snapshot, as a multiple of a 4 KiB ring's\n(lower is better); rows by record size (B), columns by ring size (B).",
		Bench:     "OverwriteSnapshot",
		Filter:    ".name:OverwriteSnapshot .unit:ns/record",
		Row:       "/record",
		RowHeader: "record B",
		Key:       "/ring",
		Base:      "4096",
	}},
})
