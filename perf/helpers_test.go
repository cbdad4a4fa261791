//go:build linux

package perf

import (
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func newEventArray(tb testing.TB) *ebpf.Map {
	tb.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
	bpftest.SkipIfNoPerfEventArray(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}

func newTestReader(tb testing.TB, m *ebpf.Map, perCPUBuffer int, opts ReaderOptions) *Reader {
	tb.Helper()
	r, err := NewReaderWithOptions(m, perCPUBuffer, opts)
	bpftest.SkipIfNoPerfEventArray(tb, err)
	tb.Cleanup(func() { r.Close() })
	return r
}

func newProducer(tb testing.TB, m *ebpf.Map, size int) *progs.Producer {
	tb.Helper()
	p, err := progs.NewPerfProducer(progs.PerfSpec{Events: m, Size: size, Pattern: true})
	bpftest.SkipIfNoPerfEventArray(tb, err)
	tb.Cleanup(func() { p.Close() })
	return p
}

// rawLen is the length of the raw sample the kernel hands out for a
// record of size bytes: padded so that its u32 length and it fill whole
// 8-byte words.
func rawLen(size int) int { return (size+4+7)&^7 - 4 }

// deliverRecord books rec in ledger, a stream per record size, or the
// records it says the kernel lost; it returns why a sample is wrong (a
// size no producer makes, a bad record, one delivered before), which
// ledger.Check reports too.
func deliverRecord(ledger *bpftest.Ledger, rec *Record) error {
	if rec.LostSamples > 0 {
		ledger.DeliverLost(rec.LostSamples)
		return nil
	}
	if err := ledger.Deliver(-1, rec.RawSample); err != nil {
		return fmt.Errorf("CPU %d: %w", rec.CPU, err)
	}
	return nil
}

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

// batchRecords ranges over r.Batches as Records ranges over r: a Record
// for each sample of a batch, then one of the lost samples the batch
// counted, if any; Remaining is left out. A break in the caller's loop
// ends the Batches loop where it is.
func batchRecords(r *Reader) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		for b, err := range r.Batches() {
			if err != nil {
				if !yield(nil, err) {
					return
				}
				continue // an unknown type's error, or the loop's last pair
			}
			rec := Record{CPU: b.CPU()}
			for sample := range b.Samples() {
				rec.RawSample = sample
				if !yield(&rec, nil) {
					return
				}
			}
			if lost := b.LostSamples(); lost > 0 {
				if !yield(&Record{CPU: b.CPU(), LostSamples: lost}, nil) {
					return
				}
			}
		}
	}
}

// styles are the read styles the tables of tests run: ReadInto, Records,
// and Batches seen through batchRecords.
var styles = []string{"read", "records", "batches"}

// loopOf returns r's loop of the style: Records, or Batches as Records.
func loopOf(r *Reader, style string) iter.Seq2[*Record, error] {
	if style == "batches" {
		return batchRecords(r)
	}
	return r.Records()
}

// consumerOf returns r's consumer of cpu's buffer, whose data_tail tells
// what the kernel was told.
func consumerOf(tb testing.TB, r *Reader, cpu int) *consumer {
	tb.Helper()
	for i := range r.consumers {
		if r.consumers[i].cpu == cpu {
			return &r.consumers[i]
		}
	}
	tb.Fatalf("no buffer of CPU %d", cpu)
	return nil
}

// tenSamplesOnOneCPU opens a Reader with 64 KiB buffers, test-runs ten
// 32-byte samples into one CPU's, and returns it with a check that the
// kernel's data_tail moved past exactly records of them since.
func tenSamplesOnOneCPU(t *testing.T) (*Reader, func(after string, records uint64)) {
	t.Helper()
	m := newEventArray(t)
	r := newTestReader(t, m, 1<<16, ReaderOptions{})
	p := newProducer(t, m, 32)
	cpu := bpftest.CPUs(t)[0]
	runOn(t, p, cpu, 10)
	c := consumerOf(t, r, cpu)
	recordBytes := uint64(headerSize + 4 + rawLen(32))
	tail := c.buf.loadTail()
	return r, func(after string, records uint64) {
		t.Helper()
		if got := c.buf.loadTail(); got != tail+records*recordBytes {
			t.Fatalf("after %s: data_tail %d, want %d", after, got, tail+records*recordBytes)
		}
	}
}
