//go:build linux

package progs

import (
	"os"
	"testing"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"
)

// overwriteRecord is AppendOverwriteRecord's record seq.
func overwriteRecord(seq uint64, size int) []byte {
	return AppendOverwriteRecord(nil, seq, size)
}

// TestCheckOverwriteRecord checks that the check passes a whole record and
// fails one torn between two records at any word, or short.
func TestCheckOverwriteRecord(t *testing.T) {
	const size = 48
	a, b := overwriteRecord(7, size), overwriteRecord(8, size)
	if seq, err := CheckOverwriteRecord(a, size); err != nil || seq != 7 {
		t.Fatalf("whole record: seq %d, %v", seq, err)
	}
	for cut := 8; cut < size; cut += 8 {
		torn := append(append([]byte{}, a[:cut]...), b[cut:]...)
		if _, err := CheckOverwriteRecord(torn, size); err == nil {
			t.Errorf("record torn at byte %d passed", cut)
		}
	}
	if _, err := CheckOverwriteRecord(a[:size-8], size); err == nil {
		t.Error("short record passed")
	}
}

// TestOverwriteProducerSizes checks the sizes the producer refuses.
func TestOverwriteProducerSizes(t *testing.T) {
	for _, size := range []int{0, 8, 12, 20} {
		if _, err := NewOverwriteProducer(nil, size); err == nil {
			t.Errorf("size %d accepted", size)
		}
	}
}

// TestOverwriteProducerRecords runs the producer into a normal ring, which
// any kernel with ring buffers has, and reads back intact records, each
// CPU's numbered from 0 in order.
func TestOverwriteProducerRecords(t *testing.T) {
	const size, runs = 48, 20
	ring, err := NewRing(os.Getpagesize())
	skipIfNoBPF(t, err)
	t.Cleanup(func() { ring.Close() })
	p, err := NewOverwriteProducer(ring, size)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { p.Close() })
	if err := p.RunExactly(runs); err != nil {
		t.Fatal(err)
	}
	produced, dropped, err := p.Counts()
	if err != nil || produced != runs || dropped != 0 {
		t.Fatalf("produced %d, dropped %d (%v); want %d, 0", produced, dropped, err, runs)
	}
	rd, err := upstream.NewReader(ring)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	next := map[int]uint64{}
	for range runs {
		rec, err := rd.Read()
		if err != nil {
			t.Fatal(err)
		}
		seq, err := CheckOverwriteRecord(rec.RawSample, size)
		if err != nil {
			t.Fatal(err)
		}
		cpu, n := CPUOf(seq)
		if n != next[cpu] {
			t.Fatalf("CPU %d: record %d, want %d", cpu, n, next[cpu])
		}
		next[cpu]++
	}
}

// TestOverwriteRingNeverFull checks that an overwrite-mode ring takes
// every record however many times it is filled: none is dropped.
func TestOverwriteRingNeverFull(t *testing.T) {
	const size = 64
	ring, err := NewOverwriteRing(os.Getpagesize())
	skipIfNoBPF(t, err)
	t.Cleanup(func() { ring.Close() })
	if ring.Flags()&RBOverwrite == 0 {
		t.Fatalf("ring flags %#x lack BPF_F_RB_OVERWRITE", ring.Flags())
	}
	p, err := NewOverwriteProducer(ring, size)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { p.Close() })
	runs := 10 * os.Getpagesize() / (size + 8)
	if err := p.Run(runs); err != nil {
		t.Fatal(err)
	}
	produced, dropped, err := p.Counts()
	if err != nil || produced < uint64(runs) || dropped != 0 {
		t.Fatalf("produced %d, dropped %d (%v); want at least %d, none dropped", produced, dropped, err, runs)
	}
}

// TestNewOverwriteRingType checks that the ring is a ring buffer map.
func TestNewOverwriteRingType(t *testing.T) {
	ring, err := NewOverwriteRing(os.Getpagesize())
	skipIfNoBPF(t, err)
	defer ring.Close()
	if ring.Type() != ebpf.RingBuf {
		t.Fatalf("type %s", ring.Type())
	}
}
