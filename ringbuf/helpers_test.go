//go:build linux

package ringbuf

import (
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
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

// produceOnBothCPUs runs every producer on CPU 0 and CPU 1 at once, each at
// least runs times and on while more() says so (at most 10 s more), and
// returns when all are done. more lets a test wait until every reader has
// had records: on two CPUs shared by many goroutines the scheduler may
// leave one out for a while.
func produceOnBothCPUs(t *testing.T, producers []*progs.Producer, runs int, more func() bool) {
	t.Helper()
	giveUp := time.Now().Add(10 * time.Second)
	var producing sync.WaitGroup
	for _, p := range producers {
		for cpu := range 2 {
			producing.Add(1)
			go func() {
				defer producing.Done()
				if unpin, err := cpustat.Pin(cpu); err == nil {
					defer unpin()
				}
				for done := 0; done < runs || more() && time.Now().Before(giveUp); done += 500 {
					if err := p.Run(500); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	producing.Wait()
}
