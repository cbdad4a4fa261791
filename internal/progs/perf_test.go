//go:build linux

package progs

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"
)

// TestPerfProducerRecords sends patterned records of a few sizes through
// a perf buffer and checks each one, in order, with nothing dropped.
func TestPerfProducerRecords(t *testing.T) {
	for _, size := range []int{8, 13, 84, 1000} {
		events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
		skipIfNoBPF(t, err)
		t.Cleanup(func() { events.Close() })
		rd, err := perf.NewReader(events, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rd.Close() })
		p, err := NewPerfProducer(PerfSpec{Events: events, Size: size, Pattern: true})
		skipIfNoBPF(t, err)
		t.Cleanup(func() { p.Close() })
		if err := p.Run(10); err != nil {
			t.Fatal(err)
		}
		produced, dropped, err := p.Counts()
		if err != nil || produced < 10 || dropped != 0 {
			t.Fatalf("size %d: produced %d, dropped %d (%v)", size, produced, dropped, err)
		}
		rd.SetDeadline(time.Now().Add(5 * time.Second))
		for want := range produced {
			rec, err := rd.Read()
			if err != nil {
				t.Fatal(err)
			}
			// The kernel pads the raw sample with its u32 length to 8 bytes.
			if len(rec.RawSample) != (size+4+7)&^7-4 {
				t.Fatalf("size %d: sample of %d bytes", size, len(rec.RawSample))
			}
			seq, err := CheckRecord(rec.RawSample[:size], size, true)
			if err != nil || seq != want {
				t.Fatalf("size %d: record %d: seq %d, %v", size, want, seq, err)
			}
		}
	}
}

// TestPerfProducerWithoutReader checks that with no buffer to write to
// (no reader open) every record counts as dropped.
func TestPerfProducerWithoutReader(t *testing.T) {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { events.Close() })
	p, err := NewPerfProducer(PerfSpec{Events: events, Size: 16})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { p.Close() })
	if err := p.Run(5); err != nil {
		t.Fatal(err)
	}
	if produced, dropped, err := p.Counts(); err != nil || produced < 5 || dropped != produced {
		t.Fatalf("produced %d, dropped %d (%v): want all dropped", produced, dropped, err)
	}
}
