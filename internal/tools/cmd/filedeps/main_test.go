package main

import (
	"strings"
	"testing"
)

// TestLayers holds the files of ringbuf, perf and the engine they share
// (internal/readers, internal/epoll) to layers: no two files of a package
// use each other, directly or through others.
func TestLayers(t *testing.T) {
	var out strings.Builder
	loops, err := run(&out, "../../../..", []string{"./ringbuf", "./perf", "./internal/readers", "./internal/epoll"})
	if err != nil {
		t.Fatal(err)
	}
	if loops > 0 {
		t.Errorf("%d loops among the files:\n%s", loops, out.String())
	}
	for _, want := range []string{"github.com/ebpf-zc/ebpf/ringbuf:", "github.com/ebpf-zc/ebpf/perf:",
		"github.com/ebpf-zc/ebpf/internal/readers:", "github.com/ebpf-zc/ebpf/internal/epoll:", "ring.go", "abi.go", "claims.go", "waiter.go"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not name %s:\n%s", want, out.String())
		}
	}
}

// TestLoopFound checks that a loop is found and named.
func TestLoopFound(t *testing.T) {
	g := &graph{
		pkg:   "p",
		files: []string{"a.go", "b.go", "c.go"},
		uses: map[string]map[string][]string{
			"a.go": {"b.go": {"B"}},
			"b.go": {"a.go": {"A"}, "c.go": {"C"}},
		},
	}
	var out strings.Builder
	if n := g.print(&out); n != 1 {
		t.Fatalf("%d loops, want 1:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "loop: a.go -> b.go") {
		t.Errorf("the loop is not named:\n%s", out.String())
	}
	if !strings.Contains(out.String(), " 1 c.go") {
		t.Errorf("c.go is not on the ground floor:\n%s", out.String())
	}
}
