package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
cpu: AMD EPYC
kernel: 6.18.44
xdp-pps: 80000
xdp-mode: native
BenchmarkXDP/strategy=baseline-2   1   10.0 bpf-ms/s  60.0 bpf-ns/pkt  0 delivered-pps  0 lost-%  80000 offered-pps  0 sys-ms/s  0 usr-ms/s
BenchmarkXDP/strategy=rb-epoll-2   1   100 delivered-pps  0 lost-%  1.0 p50-us  200 usr-ms/s  100 sys-ms/s  5000 cpu-ms/Mpkt
BenchmarkXDP/strategy=rb-epoll-2   1   300 delivered-pps  0 lost-%  3.0 p50-us  400 usr-ms/s  100 sys-ms/s  7000 cpu-ms/Mpkt
BenchmarkXDP/strategy=rb-epoll-2   1   200 delivered-pps  1 lost-%  2.0 p50-us  300 usr-ms/s  100 sys-ms/s  6000 cpu-ms/Mpkt
BenchmarkXDPLoss/pps=100000/strategy=perf-epoll-2   1   99000 delivered-pps  0.5 e2e-lost-%
    xdp_bench_test.go:1: some log line
PASS
`

// TestTable checks medians, labels and the columns of both tables.
func TestTable(t *testing.T) {
	var out strings.Builder
	if err := run(strings.NewReader(sample), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"xdp-mode: native",
		"kernel: 6.18.44",
		"xdp-pps: 80000",
		"| strategy | runs | offered pps |",
		"| baseline | 1 | 80000 | 0 | 0.000 | – |",
		// Medians over three runs: 200 pps, 2.0 µs, 40% consumer CPU.
		"| rb-epoll | 3 | – | 200 | 0.000 | – | 2.0 |",
		"| 40.0 | 6000 |",
		"| 100000 perf-epoll | 1 | – | – | 99000 | – | 0.500 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "some log line") {
		t.Errorf("output has a log line:\n%s", got)
	}
}

// TestParseErrors checks inputs the formatter must refuse.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"no results", "goos: linux\nPASS\n"},
		{"odd fields", "BenchmarkXDP/strategy=x-2 1 5 unit 7\n"},
		{"bad number", "BenchmarkXDP/strategy=x-2 1 five unit\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(strings.NewReader(tc.in), &strings.Builder{}); err == nil {
				t.Error("no error")
			}
		})
	}
}
