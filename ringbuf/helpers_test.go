//go:build linux

package ringbuf

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// skipIfNoBPF skips when the kernel refuses BPF itself (no privileges, no
// support) and fails on any other error.
func skipIfNoBPF(tb testing.TB, err error) {
	tb.Helper()
	bpftest.SkipIfUnavailable(tb, err, "BPF ring buffers")
}

func newRingMap(tb testing.TB, size int) *ebpf.Map {
	tb.Helper()
	m, err := progs.NewRing(size)
	skipIfNoBPF(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}

func newProducer(tb testing.TB, spec progs.RingbufSpec) *progs.Producer {
	tb.Helper()
	p, err := progs.NewRingbufProducer(spec)
	skipIfNoBPF(tb, err)
	tb.Cleanup(func() { p.Close() })
	return p
}

func newTestReader(tb testing.TB, m *ebpf.Map) *Reader {
	tb.Helper()
	r, err := NewReader(m)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// produce runs p n times and fails unless exactly n records were numbered
// and none dropped since the last call.
func produce(tb testing.TB, p *progs.Producer, n int) {
	tb.Helper()
	before, dropsBefore, err := p.Counts()
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Run(n); err != nil {
		tb.Fatal(err)
	}
	after, drops, err := p.Counts()
	if err != nil {
		tb.Fatal(err)
	}
	if drops != dropsBefore {
		tb.Fatalf("producer dropped %d records: ring full", drops-dropsBefore)
	}
	if after-before < uint64(n) {
		tb.Fatalf("producer numbered %d records, want %d", after-before, n)
	}
}
