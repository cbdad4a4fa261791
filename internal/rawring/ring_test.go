//go:build linux

package rawring

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func TestNewRingSize(t *testing.T) {
	for _, tc := range []struct {
		dataLen int
		ok      bool
	}{
		{2 * 4096, true},
		{2 * 64, true},
		{0, false},
		{2 * 3000, false},
		{4096 + 1, false},
	} {
		var consumer, producer uint64
		_, err := newRing(&consumer, &producer, make([]byte, tc.dataLen))
		if (err == nil) != tc.ok {
			t.Errorf("data area of %d bytes: err %v, want ok=%v", tc.dataLen, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Errorf("data area of %d bytes: err %v, want ErrCorrupt", tc.dataLen, err)
		}
	}
}

func TestMapRejects(t *testing.T) {
	if _, err := Map(nil); err == nil {
		t.Error("Map(nil) succeeded")
	}
	array, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	bpftest.SkipIfUnavailable(t, err, "BPF array maps")
	t.Cleanup(func() { array.Close() })
	if _, err := Map(array); err == nil {
		t.Error("Map of an array map succeeded")
	}
}

// Both readers drain what a BPF program wrote into a kernel ring, skip
// what it discarded, and hand the space back.
func TestKernelRing(t *testing.T) {
	const size, discardEvery = 24, 3
	for _, tc := range readers {
		t.Run(tc.name, func(t *testing.T) {
			m, err := progs.NewRing(1 << 16)
			bpftest.SkipIfUnavailable(t, err, "BPF ring buffers")
			t.Cleanup(func() { m.Close() })
			producer, err := progs.NewRingbufProducer(progs.RingbufSpec{
				Ring: m, Size: size, Flags: progs.NoWakeup, Pattern: true, DiscardEvery: discardEvery,
			})
			bpftest.SkipIfUnavailable(t, err, "BPF ring buffer producers")
			t.Cleanup(func() { producer.Close() })
			if err := producer.Run(100); err != nil {
				t.Fatal(err)
			}
			produced, dropped, err := producer.Counts()
			if err != nil {
				t.Fatal(err)
			}
			if dropped != 0 {
				t.Fatalf("%d records did not fit the ring", dropped)
			}
			// Word i of record seq holds seq+i; multiples of 3 were discarded.
			var want uint64
			samples := 0
			for seq := range produced {
				if seq%discardEvery != 0 {
					want += 3*seq + 3
					samples++
				}
			}

			r, err := Map(m)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			sum, err := tc.drain(r, samples, true)
			if err != nil || sum != want {
				t.Fatalf("%d samples: sum %d, err %v; want %d, nil", samples, sum, err, want)
			}
			if _, err := tc.drain(r, 1, true); !errors.Is(err, ErrEmpty) {
				t.Errorf("drain past the end: err %v, want ErrEmpty", err)
			}
			if consumer, producer := *r.consumerPos, *r.producerPos; consumer != producer {
				t.Errorf("consumer position %d published, producer at %d", consumer, producer)
			}
		})
	}
}
