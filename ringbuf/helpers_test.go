//go:build linux

package ringbuf

import (
	"os"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func newRingMap(tb testing.TB, size int) *ebpf.Map {
	tb.Helper()
	m, err := progs.NewRing(size)
	bpftest.SkipIfNoRingBuf(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}

func newProducer(tb testing.TB, spec progs.RingbufSpec) *progs.Producer {
	tb.Helper()
	p, err := progs.NewRingbufProducer(spec)
	bpftest.SkipIfNoRingBuf(tb, err)
	tb.Cleanup(func() { p.Close() })
	return p
}

// mixedSpecs are producers of records of three sizes, written two ways,
// into m.
func mixedSpecs(m *ebpf.Map) []progs.RingbufSpec {
	return []progs.RingbufSpec{
		{Ring: m, Size: 16, Method: progs.Output, Pattern: true},
		{Ring: m, Size: 48, Method: progs.Reserve, Pattern: true},
		{Ring: m, Size: 200, Method: progs.Reserve, Pattern: true},
	}
}

// newProducers makes a producer of each spec, which must write its
// pattern, and returns them with a ledger of their records, a stream each.
func newProducers(tb testing.TB, specs []progs.RingbufSpec) ([]*progs.Producer, *bpftest.Ledger) {
	tb.Helper()
	producers := make([]*progs.Producer, len(specs))
	sizes := make([]int, len(specs))
	for i, spec := range specs {
		producers[i], sizes[i] = newProducer(tb, spec), spec.Size
	}
	return producers, bpftest.NewLedger(progs.CheckRecord, nil, producers, sizes)
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

// produce runs p exactly n times and fails unless n records were numbered
// and none dropped since the last call.
func produce(tb testing.TB, p *progs.Producer, n int) {
	tb.Helper()
	before, dropsBefore, err := p.Counts()
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.RunExactly(n); err != nil {
		tb.Fatal(err)
	}
	after, drops, err := p.Counts()
	if err != nil {
		tb.Fatal(err)
	}
	if drops != dropsBefore {
		tb.Fatalf("producer dropped %d records: ring full", drops-dropsBefore)
	}
	if got := after - before; got != uint64(n) {
		tb.Fatalf("producer numbered %d records, want %d", got, n)
	}
}

// kernelPositions reads m's consumer and producer positions through a
// mapping of its own: what the kernel sees, whatever a reader of m holds
// or has already unmapped.
func kernelPositions(tb testing.TB, m *ebpf.Map) (consumer, producer uint64) {
	tb.Helper()
	page := os.Getpagesize()
	mem, err := unix.Mmap(m.FD(), 0, page, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		tb.Fatal(err)
	}
	defer unix.Munmap(mem)
	prod, err := unix.Mmap(m.FD(), int64(page), page, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		tb.Fatal(err)
	}
	defer unix.Munmap(prod)
	consumer = position{word: unsafe.Pointer(&mem[0])}.load(0)
	return consumer, position{word: unsafe.Pointer(&prod[0])}.load(consumer)
}

// kernelConsumer is kernelPositions' consumer position.
func kernelConsumer(tb testing.TB, m *ebpf.Map) uint64 {
	tb.Helper()
	consumer, _ := kernelPositions(tb, m)
	return consumer
}
