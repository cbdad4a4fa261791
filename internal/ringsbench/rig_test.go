//go:build linux

package ringsbench

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// skipWithoutRings skips where the kernel or privileges refuse ring
// buffers.
func skipWithoutRings(t *testing.T) {
	t.Helper()
	m, err := progs.NewRing(4096)
	bpftest.SkipIfUnavailable(t, err, "BPF ring buffers")
	m.Close()
}

// TestRigDeliversEverything produces on every CPU into each layout,
// drains, and checks that every event arrived once.
func TestRigDeliversEverything(t *testing.T) {
	skipWithoutRings(t)
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []Layout{Shared, PerCPU} {
		t.Run(string(layout), func(t *testing.T) {
			r, err := New(Config{Layout: layout, Producers: cpus, Size: 100, RingBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			for range 3 {
				busy, err := r.Produce(r.Chunk)
				if err != nil || busy <= 0 {
					t.Fatalf("produce: %v, busy %v", err, busy)
				}
				if err := r.Drain(); err != nil {
					t.Fatal(err)
				}
			}
			produced, dropped, err := r.Counts()
			if err != nil {
				t.Fatal(err)
			}
			if produced < uint64(3*cpus*r.Chunk) || dropped != 0 {
				t.Fatalf("produced %d, dropped %d; want at least %d and none", produced, dropped, 3*cpus*r.Chunk)
			}
		})
	}
}

// TestRigBadConfig checks that impossible configurations are refused.
func TestRigBadConfig(t *testing.T) {
	skipWithoutRings(t)
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no producers", Config{Layout: Shared, Producers: 0, Size: 16, RingBytes: 1 << 20}, "0 producers"},
		{"more producers than CPUs", Config{Layout: Shared, Producers: cpus + 1, Size: 16, RingBytes: 1 << 20}, "producers, want 1 to"},
		{"unknown layout", Config{Layout: "ring-per-socket", Producers: 1, Size: 16, RingBytes: 1 << 20}, "unknown layout"},
		{"records larger than the rings", Config{Layout: PerCPU, Producers: 1, Size: 1 << 20, RingBytes: 8192 * cpus}, "hold no"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := New(c.cfg)
			if err == nil {
				r.Close()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestProduceMoreThanChunk checks that asking for more events than the
// rings hold between drains is an error, not a silent loss.
func TestProduceMoreThanChunk(t *testing.T) {
	skipWithoutRings(t)
	r, err := New(Config{Layout: Shared, Producers: 1, Size: 16, RingBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := r.Produce(r.Chunk + 1); err == nil {
		t.Fatal("no error for more events than the ring holds")
	}
}
