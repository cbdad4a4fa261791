//go:build linux

package ringbuf

import (
	"fmt"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// BenchmarkMultiRecords drains the same number of records from one ring
// with Reader.Records, and from one, two and four rings (of the same total
// size) with MultiReader.Records: what reading many rings as one stream
// costs per record. Every record drained is counted per ring.
func BenchmarkMultiRecords(b *testing.B) {
	const total = 64 << 20
	for _, size := range []int{16, 256} {
		for _, rings := range []int{1, 2, 4} {
			for _, reader := range []string{"Reader", "MultiReader"} {
				if reader == "Reader" && rings > 1 {
					continue
				}
				b.Run(fmt.Sprintf("size=%d/rings=%d/reader=%s", size, rings, reader), func(b *testing.B) {
					benchmarkMulti(b, size, rings, total/rings, reader == "MultiReader")
				})
			}
		}
	}
}

func benchmarkMulti(b *testing.B, size, n, ringSize int, multi bool) {
	maps := make([]*ebpf.Map, n)
	producers := make([]*progs.Producer, n)
	for i := range maps {
		m, err := progs.NewRing(ringSize)
		bpftest.SkipIfNoRingBuf(b, err)
		b.Cleanup(func() { m.Close() })
		p, err := progs.NewRingbufProducer(progs.RingbufSpec{Ring: m, Size: size, Flags: progs.NoWakeup})
		bpftest.SkipIfNoRingBuf(b, err)
		b.Cleanup(func() { p.Close() })
		maps[i], producers[i] = m, p
	}
	var records func(yield func(*Record, error) bool)
	if multi {
		mr, err := NewMultiReader(maps...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { mr.Close() })
		records = mr.Records()
	} else {
		r, err := NewReader(maps[0])
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		records = r.Records()
	}
	perRing := ringSize / ((size+7)&^7 + headerSize)
	got, want := make([]int, n), make([]int, n)
	inRings := 0
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; {
		if inRings == 0 {
			b.StopTimer()
			for i, p := range producers {
				if err := progs.RunTimes(p.Program, min(perRing, (left+n-1)/n)); err != nil {
					b.Fatal(err)
				}
				produced, dropped, err := p.Counts()
				if err != nil {
					b.Fatal(err)
				}
				inRings += int(produced-dropped) - want[i]
				want[i] = int(produced - dropped)
			}
			b.StartTimer()
		}
		drain := min(left, inRings)
		drained := 0
		for rec, err := range records {
			if err != nil {
				b.Fatal(err)
			}
			got[rec.Ring]++
			if drained++; drained == drain {
				break
			}
		}
		inRings -= drain
		left -= drain
	}
	b.StopTimer()
	for i := range got {
		if got[i] > want[i] {
			b.Fatalf("ring %d: %d records drained, %d produced", i, got[i], want[i])
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
}
