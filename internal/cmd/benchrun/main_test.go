//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/drainbench/ours"
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
	p, err := parseGoTest(strings.Fields(`go test -tags libbpf -bench BenchmarkRead$ -benchtime 50ms -count 6`))
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

func TestSplitCommands(t *testing.T) {
	got := splitCommands([]string{"go", "test", "---", "taskset", "go", "test", "---"})
	if len(got) != 2 || strings.Join(got[1], " ") != "taskset go test" {
		t.Errorf("got %q", got)
	}
}

func TestLineKinds(t *testing.T) {
	for line, want := range map[string]bool{
		"BenchmarkRead/size=16/mode=copy/touch=head-2   \t 2231092\t 25.37 ns/op": true,
		"BenchmarkRead/size=16/mode=libbpf/touch=head":                            false,
		"--- SKIP: BenchmarkRead/size=16/mode=libbpf/touch=head":                  false,
	} {
		if got := isResult(line); got != want {
			t.Errorf("isResult(%q) = %v", line, got)
		}
	}
	for line, want := range map[string]bool{
		"goos: linux": true, "xdp-pps: 80000": true, "PASS": true,
		"ok  \tgithub.com/ebpf-zc/ebpf/ringbuf\t12.5s": true,
		"    bench_test.go:12: mode libbpf: no":        false,
		"--- FAIL: BenchmarkRead":                      false,
	} {
		if got := isFraming(line); got != want {
			t.Errorf("isFraming(%q) = %v", line, got)
		}
	}
}
