package benchprogress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestLineKinds(t *testing.T) {
	for line, want := range map[string]bool{
		"BenchmarkRead/size=16/mode=copy/touch=head-2   \t 2231092\t 25.37 ns/op": true,
		"BenchmarkRead/size=16/mode=libbpf/touch=head":                            false,
		"--- SKIP: BenchmarkRead/size=16/mode=libbpf/touch=head":                  false,
	} {
		if got := IsResult(line); got != want {
			t.Errorf("IsResult(%q) = %v", line, got)
		}
	}
	for line, want := range map[string]bool{
		"goos: linux": true, "xdp-pps: 80000": true, "PASS": true,
		"ok  \tgithub.com/ebpf-zc/ebpf/ringbuf\t12.5s": true,
		"    bench_test.go:12: mode libbpf: no":        false,
		"--- FAIL: BenchmarkRead":                      false,
	} {
		if got := IsFraming(line); got != want {
			t.Errorf("IsFraming(%q) = %v", line, got)
		}
	}
}

// TestLines feeds go test output in pieces that split lines: every byte
// reaches the results, results count, a repeated skip is shown once, and
// a run with more results than planned raises the total.
func TestLines(t *testing.T) {
	var shown, results bytes.Buffer
	p := New(&shown, "t", 1, time.Second)
	out := "goos: linux\n" +
		"--- SKIP: BenchmarkRead/size=16/mode=libbpf/touch=head\n" +
		"BenchmarkRead/size=16/mode=copy/touch=head-2 \t 10\t 5 ns/op\n" +
		"--- SKIP: BenchmarkRead/size=16/mode=libbpf/touch=head\n" +
		"BenchmarkRead/size=16/mode=copy/touch=head-2 \t 10\t 5 ns/op\n" +
		"PASS\n"
	w := p.Lines(&results)
	for i := 0; i < len(out); i += 7 {
		if _, err := w.Write([]byte(out[i:min(i+7, len(out))])); err != nil {
			t.Fatal(err)
		}
	}
	p.Finish()
	if results.String() != out {
		t.Errorf("results file got %q", results.String())
	}
	if n := strings.Count(shown.String(), "SKIP"); n != 1 {
		t.Errorf("skip shown %d times:\n%s", n, shown.String())
	}
	if !strings.Contains(shown.String(), "t: 2 results in") {
		t.Errorf("no final count:\n%s", shown.String())
	}
}
