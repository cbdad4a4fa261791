//go:build linux

package bench

import (
	"strconv"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// BenchmarkOverwriteSnapshot times one SnapshotReader.Snapshot of a full
// overwrite-mode ring (BPF_F_RB_OVERWRITE, Linux 6.19+) of each
// OVERWRITE_RINGS size, holding records of each OVERWRITE_RECORDS size:
// the copy, the re-check and the loop over the records, whose body only
// reads each record's length. Before each snapshot, outside the timer,
// the producer laps the ring, so that every snapshot finds it full. It
// reports the time per record and the bytes of the ring copied per
// second; a row fails unless each snapshot hands out every record the
// ring holds. Rings larger than RINGBUF_BENCH_RING skip: the kernel
// matrix's VMs set it to keep their benchmark smoke small. make
// bench-overwrite runs it (internal/benchfamily).
func BenchmarkOverwriteSnapshot(b *testing.B) {
	largest := knobInt(b, "RINGBUF_BENCH_RING")
	for _, ring := range knobInts(b, "OVERWRITE_RINGS") {
		for _, record := range knobInts(b, "OVERWRITE_RECORDS") {
			b.Run("ring="+strconv.Itoa(ring)+"/record="+strconv.Itoa(record), func(b *testing.B) {
				if ring > largest {
					b.Skipf("ring of %d bytes: RINGBUF_BENCH_RING allows %d at most", ring, largest)
				}
				overwriteSnapshotRow(b, ring, record)
			})
		}
	}
}

func overwriteSnapshotRow(b *testing.B, ringSize, recordSize int) {
	m, err := progs.NewOverwriteRing(ringSize)
	bpftest.SkipIfNoRingBuf(b, err)
	defer m.Close()
	p, err := progs.NewOverwriteProducer(m, recordSize)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	r, err := ringbuf.NewSnapshotReader(m)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	// The ring holds as many records as fit in size-1 bytes.
	held := (ringSize - 1) / (recordSize + 8)
	var records, sum int
	b.SetBytes(int64(held * (recordSize + 8)))
	b.ReportAllocs()
	b.StopTimer()
	for range b.N {
		if err := p.Run(held + 1); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n := 0
		for sample, err := range r.Snapshot() {
			if err != nil {
				b.Fatal(err)
			}
			sum += len(sample)
			n++
		}
		b.StopTimer()
		if n != held {
			b.Fatalf("a snapshot of a full ring handed out %d records, want the %d it holds", n, held)
		}
		records += n
	}
	if sum != records*recordSize {
		b.Fatalf("%d bytes in %d records", sum, records)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
}
