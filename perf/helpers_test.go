//go:build linux

package perf

import (
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// skipIfNoBPF skips when the kernel refuses BPF itself (no privileges, no
// support) and fails on any other error.
func skipIfNoBPF(tb testing.TB, err error) {
	tb.Helper()
	bpftest.SkipIfUnavailable(tb, err, "BPF perf event arrays")
}

func newEventArray(tb testing.TB) *ebpf.Map {
	tb.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
	skipIfNoBPF(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}

func newTestReader(tb testing.TB, m *ebpf.Map, perCPUBuffer int, opts ReaderOptions) *Reader {
	tb.Helper()
	r, err := NewReaderWithOptions(m, perCPUBuffer, opts)
	skipIfNoBPF(tb, err)
	tb.Cleanup(func() { r.Close() })
	return r
}

func newProducer(tb testing.TB, m *ebpf.Map, size int) *progs.Producer {
	tb.Helper()
	p, err := progs.NewPerfProducer(progs.PerfSpec{Events: m, Size: size, Pattern: true})
	skipIfNoBPF(tb, err)
	tb.Cleanup(func() { p.Close() })
	return p
}

// rawLen is the length of the raw sample the kernel hands out for a
// record of size bytes: padded so that its u32 length and it fill whole
// 8-byte words.
func rawLen(size int) int { return (size+4+7)&^7 - 4 }

// checkSample checks a sample of a producer of size bytes and returns its
// sequence number.
func checkSample(tb testing.TB, sample []byte, size int) uint64 {
	tb.Helper()
	if len(sample) != rawLen(size) {
		tb.Fatalf("sample of %d bytes, want %d for a %d-byte record", len(sample), rawLen(size), size)
	}
	seq, err := progs.CheckRecord(sample[:size], size, true)
	if err != nil {
		tb.Fatal(err)
	}
	return seq
}

// runOn runs p exactly n times on cpu.
func runOn(tb testing.TB, p *progs.Producer, cpu, n int) {
	tb.Helper()
	unpin, err := cpustat.Pin(cpu)
	if err != nil {
		tb.Fatal(err)
	}
	defer unpin()
	if err := p.RunExactly(n); err != nil {
		tb.Fatal(err)
	}
}

// testCPUs returns up to two CPUs this process may run on: the kernel
// matrix's VMs have one.
func testCPUs(tb testing.TB) []int {
	tb.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		tb.Fatal(err)
	}
	var cpus []int
	for cpu := 0; cpu < 1024 && len(cpus) < 2; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// produceOnBothCPUs runs every producer on each of testCPUs at once, runs
// times each, and returns when all are done.
func produceOnBothCPUs(t *testing.T, producers []*progs.Producer, runs int) {
	t.Helper()
	var producing sync.WaitGroup
	for _, p := range producers {
		for _, cpu := range testCPUs(t) {
			producing.Go(func() {
				if unpin, err := cpustat.Pin(cpu); err == nil {
					defer unpin()
				}
				for done := 0; done < runs; done += 500 {
					if err := p.Run(min(500, runs-done)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	producing.Wait()
}

// drainNow reads every record there is with ReadInto, deadline now.
func drainNow(t *testing.T, r *Reader) []Record {
	t.Helper()
	r.SetDeadline(time.Now())
	defer r.SetDeadline(time.Time{})
	var recs []Record
	for {
		rec, err := r.Read()
		if err != nil {
			return recs
		}
		recs = append(recs, rec)
	}
}
