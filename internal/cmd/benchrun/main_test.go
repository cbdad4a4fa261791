//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/drainbench/ours"
	"github.com/ebpf-zc/ebpf/internal/perfdrain"
)

func TestParseGoTest(t *testing.T) {
	p, err := parseGoTest(strings.Fields(`taskset -c 1 go test -tags libbpf -run ^$ -bench BenchmarkRead$|BenchmarkEndToEnd$ -benchtime 50ms -count 6 ./ringbuf/`))
	if err != nil {
		t.Fatal(err)
	}
	if p.count != 6 || p.benchtime != 50*time.Millisecond || !p.libbpf {
		t.Errorf("got %+v", p)
	}
	if !p.bench.MatchString("BenchmarkEndToEnd") || p.bench.MatchString("BenchmarkReadX") {
		t.Errorf("-bench %v", p.bench)
	}
	if _, err := parseGoTest([]string{"go", "test", "./..."}); err == nil {
		t.Error("a command without -bench planned")
	}
	p, err = parseGoTest(strings.Fields(`go test -bench=BenchmarkXDP -benchtime=1x -count=3`))
	if err != nil || p.count != 3 || p.benchtime != 0 {
		t.Errorf("got %+v, %v", p, err)
	}
}

// TestPlanRead checks BenchmarkRead's plan against its loops: sizes from
// RINGBUF_BENCH_SIZES, our modes and the five references, two touches.
func TestPlanRead(t *testing.T) {
	t.Setenv("RINGBUF_BENCH_SIZES", "16,4096")
	p, err := parseGoTest(strings.Fields(`go test -tags libbpf -bench BenchmarkRead$ -benchtime 50ms -count 6 ./ringbuf/`))
	if err != nil {
		t.Fatal(err)
	}
	pl := planFor(p)
	if want := 2 * (len(ours.Modes) + 5) * 2 * 6; pl.results != want {
		t.Errorf("%d results planned, want %d", pl.results, want)
	}
	if pl.cost <= 0 {
		t.Errorf("cost %v", pl.cost)
	}
}

// TestPlanPerfRead checks that perf's BenchmarkRead, named like
// ringbuf's, is planned by its own loops: sizes from PERF_BENCH_SIZES,
// perf's modes, two touches; and only where the command names ./perf
// (with or without the slash) or ./... .
func TestPlanPerfRead(t *testing.T) {
	t.Setenv("RINGBUF_BENCH_SIZES", "16")
	t.Setenv("PERF_BENCH_SIZES", "16,64,4096")
	for _, tc := range []struct {
		cmd  string
		want int
	}{
		{`go test -bench BenchmarkRead$ -benchtime 100ms -count 2 ./perf/`, 3 * len(perfdrain.Modes) * 2 * 2},
		{`go test -bench BenchmarkRead$ -benchtime 100ms -count 2 ./ringbuf/ ./perf/`,
			3*len(perfdrain.Modes)*2*2 + 1*(len(ours.Modes)+4)*2*2},
		{`go test -bench BenchmarkRead$ -benchtime 100ms -count 2 ./perf`, 3 * len(perfdrain.Modes) * 2 * 2},
		{`go test -bench BenchmarkRead$ -benchtime 100ms -count 2 ./...`,
			3*len(perfdrain.Modes)*2*2 + 1*(len(ours.Modes)+4)*2*2},
		{`go test -bench BenchmarkRead$ -benchtime 100ms -count 2`, 0}, // the current directory's: none of ours
	} {
		p, err := parseGoTest(strings.Fields(tc.cmd))
		if err != nil {
			t.Fatal(err)
		}
		if got := planFor(p).results; got != tc.want {
			t.Errorf("%s: %d results planned, want %d", tc.cmd, got, tc.want)
		}
	}
}

// TestPlanRounds checks that rounds of -count 1 plan what -count n in
// one go does, the same results in the same time, for the commands of
// every target that runs in rounds.
func TestPlanRounds(t *testing.T) {
	t.Setenv("RINGBUF_BENCH_SIZES", "16,4096")
	t.Setenv("PERF_BENCH_SIZES", "64,1024")
	for _, tc := range []struct {
		target   string
		cmds     string // %s is the -count
		families int    // the top-level benchmarks they run
	}{
		{"bench", `go test -bench BenchmarkRead$|BenchmarkEndToEnd$ -benchtime 50ms -count %s ./ringbuf/` +
			` --- go test -bench BenchmarkWrite$ -benchtime 50ms -count %s ./ringbuf/`, 3},
		{"bench-perf", `go test -bench BenchmarkRead$ -benchtime 100ms -count %s ./perf/`, 1},
		{"bench-k2u", `go test -bench BenchmarkProducer$|BenchmarkK2U$ -count %s ./bench/`, 2},
		{"bench-rings", `go test -bench BenchmarkRings$ -benchtime 1s -count %s ./bench/` +
			` --- taskset -c 1 go test -bench BenchmarkMultiRecords$ -benchtime 50ms -count %s ./ringbuf/`, 2},
		{"bench-sockfilter", `go test -bench BenchmarkSocketFilter -benchtime 1x -count %s ./bench/`, 1},
		{"bench-xdp", `go test -bench BenchmarkXDP -benchtime 1x -count %s ./bench/`, 2},
	} {
		t.Run(tc.target, func(t *testing.T) {
			cmd := func(count string) [][]string {
				return splitCommands(strings.Fields(strings.ReplaceAll(tc.cmds, "%s", count)))
			}
			inRounds, err := planCommands(cmd("1"), 6)
			if err != nil {
				t.Fatal(err)
			}
			inOne, err := planCommands(cmd("6"), 1)
			if err != nil {
				t.Fatal(err)
			}
			if inRounds.results != inOne.results || inRounds.cost != inOne.cost || inOne.results == 0 {
				t.Errorf("6 rounds plan %d results in %v, -count 6 %d in %v", inRounds.results, inRounds.cost, inOne.results, inOne.cost)
			}
			// A line for each family, and one for the rounds.
			if want := tc.families + 1; len(inRounds.lines) != want {
				t.Errorf("plan lines %q, want %d", inRounds.lines, want)
			}
		})
	}
	if _, err := planCommands(splitCommands(strings.Fields(`go test -bench BenchmarkRead$ -count x ./ringbuf/`)), 2); err == nil {
		t.Error("a bad -count planned")
	}
}

func TestSplitCommands(t *testing.T) {
	got := splitCommands([]string{"go", "test", "---", "taskset", "go", "test", "---"})
	if len(got) != 2 || strings.Join(got[1], " ") != "taskset go test" {
		t.Errorf("got %q", got)
	}
}
