package main

import (
	"errors"
	"strings"
	"testing"
)

// TestProjectFile checks what Project writes for a small results file:
// the fit uses medians, and each configuration gets a line per count.
func TestProjectFile(t *testing.T) {
	const in = `goos: linux
cpu: AMD EPYC
BenchmarkRings/layout=shared/producers=1/size=16/flags=0-2   100  41 ns/op  40 ns/event  24 Mevents/s
BenchmarkRings/layout=shared/producers=1/size=16/flags=0-2   100  41 ns/op  44 ns/event  24 Mevents/s
BenchmarkRings/layout=shared/producers=1/size=16/flags=0-2   100  41 ns/op  10 ns/event  24 Mevents/s
BenchmarkRings/layout=shared/producers=2/size=16/flags=0-2   100  51 ns/op  50 ns/event  39 Mevents/s
BenchmarkRings/layout=percpu/producers=1/size=16/flags=0-2   100  31 ns/op  30 ns/event  33 Mevents/s
BenchmarkRings/layout=percpu/producers=2/size=16/flags=0-2   100  31 ns/op  30 ns/event  66 Mevents/s
BenchmarkOther/producers=7-2   100  31 ns/op
`
	var out strings.Builder
	if err := Project(strings.NewReader(in), "in.txt", &out, []int{1, 8}); err != nil {
		t.Fatal(err)
	}
	// shared: median t(1) = 40, s = 10, t(8) = 110 ns, 8/110 ns = 72.73 M/s.
	want := []string{
		"BenchmarkRings/layout=percpu-projection/producers=1/size=16/flags=0 1 30 ns/event 33.33 Mevents/s",
		"BenchmarkRings/layout=percpu-projection/producers=8/size=16/flags=0 1 30 ns/event 266.7 Mevents/s",
		"BenchmarkRings/layout=shared-projection/producers=1/size=16/flags=0 1 40 ns/event 25 Mevents/s",
		"BenchmarkRings/layout=shared-projection/producers=8/size=16/flags=0 1 110 ns/event 72.73 Mevents/s",
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want)+1 || !strings.HasPrefix(lines[0], "# projection") {
		t.Fatalf("got\n%s\nwant a comment and %d lines", out.String(), len(want))
	}
	for i, w := range want {
		if lines[i+1] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i+1], w)
		}
	}
}

// TestProjectErrors checks that Project refuses input it cannot fit.
func TestProjectErrors(t *testing.T) {
	cases := []struct {
		name, in  string
		producers []int
		want      string
	}{
		{"no results", "goos: linux\n", []int{8}, "no BenchmarkRings results"},
		{"one count only", "BenchmarkRings/layout=shared/producers=1/size=16/flags=0-2 1 5 ns/event\n", []int{8}, "need producers=1 and producers=2"},
		{"no ns/event", "BenchmarkRings/layout=shared/producers=1/size=16/flags=0-2 1 5 ns/op\n", []int{8}, "no ns/event"},
		{"zero cost", "BenchmarkRings/layout=shared/producers=1/size=16/flags=0-2 1 0 ns/event\nBenchmarkRings/layout=shared/producers=2/size=16/flags=0-2 1 5 ns/event\n", []int{8}, "positive"},
		{"zero producers", "BenchmarkRings/layout=shared/producers=1/size=16/flags=0-2 1 5 ns/event\nBenchmarkRings/layout=shared/producers=2/size=16/flags=0-2 1 5 ns/event\n", []int{0}, "at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Project(strings.NewReader(c.in), "in.txt", &strings.Builder{}, c.producers)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	if err := Project(strings.NewReader(""), "in.txt", &strings.Builder{}, nil); !errors.Is(err, ErrNoProducers) {
		t.Errorf("no producer counts: %v, want ErrNoProducers", err)
	}
}
