//go:build linux

package ringbuf

import (
	"testing"

	"github.com/ebpf-zc/ebpf/internal/progs"
)

// BenchmarkSnapshotFakeRing times a snapshot of a full 64 KiB fake
// overwrite-mode ring of 56-byte records, which the producer laps before
// each, outside the timer: the copy, the re-check, and the loop with its
// compare-and-swap a record, on any kernel. BenchmarkOverwriteSnapshot
// (bench/) times the kernel's ring, on Linux 6.19+.
func BenchmarkSnapshotFakeRing(b *testing.B) {
	const size, recordSize = 1 << 16, 56
	const held = (size - 1) / (recordSize + headerSize)
	f := newOverwriteFake(b, size)
	r := f.reader(b)
	record := progs.AppendOverwriteRecord(nil, 1, recordSize)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range held + 1 {
			f.write(record)
		}
		b.StartTimer()
		records := 0
		for _, err := range r.Snapshot() {
			if err != nil {
				b.Fatal(err)
			}
			records++
		}
		if records != held {
			b.Fatalf("a snapshot handed out %d records, want the %d held", records, held)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*held), "ns/record")
}
