//go:build linux

package ringbuf

import (
	"encoding/binary"
	"testing"
	"time"
	"unsafe"
)

// FuzzRing fills a 4 KiB ring with arbitrary bytes and positions: reading
// it must end in an error, never a panic or a sample outside the data area,
// whether with Records, with Peek, or with single reads and short Records
// loops interleaved on one reader as schedule says.
func FuzzRing(f *testing.F) {
	seed := make([]byte, 64)
	binary.NativeEndian.PutUint32(seed[0:], 3)
	binary.NativeEndian.PutUint32(seed[16:], 5|discardBit)
	binary.NativeEndian.PutUint32(seed[32:], 1000)
	f.Add(seed, uint64(0), uint64(48), uint8(0x5a))
	f.Add(seed, uint64(4096-16), uint64(4096+64), uint8(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint64(8), uint64(16), uint8(2))
	f.Add([]byte{}, uint64(0), uint64(1<<63), uint8(3))

	const size = 4096
	ring := newFakeRing(f, size)
	f.Fuzz(func(t *testing.T, contents []byte, consumer, producer uint64, schedule uint8) {
		clear(ring.data[:size])
		copy(ring.data[:size], contents)
		ring.positions[0], ring.positions[1] = consumer, producer
		lo := uintptr(unsafe.Pointer(&ring.data[0]))
		hi := lo + 2*size
		inside := func(b []byte) bool {
			if len(b) == 0 {
				return true
			}
			p := uintptr(unsafe.Pointer(&b[0]))
			return p >= lo && p+uintptr(len(b)) <= hi && len(b) <= size
		}

		r, err := ring.reader(t)
		if err != nil {
			return // refused at the start: fine
		}
		r.SetDeadline(time.Now())
		for rec, err := range r.Records() {
			if err != nil {
				break
			}
			if !inside(rec.RawSample) {
				t.Fatalf("sample of %d bytes outside the data area", len(rec.RawSample))
			}
		}
		r.Close()

		ring.positions[0] = consumer
		r, err = ring.reader(t)
		if err != nil {
			t.Fatalf("second reader refused what the first accepted: %v", err)
		}
		r.SetDeadline(time.Now())
		for range 2 * size / headerSize {
			rec, err := r.Peek()
			if err != nil {
				break
			}
			if !inside(rec.RawSample) {
				t.Fatalf("peeked sample of %d bytes outside the data area", len(rec.RawSample))
			}
			if err := r.Consume(); err != nil {
				t.Fatal(err)
			}
		}
		r.Close()

		ring.positions[0] = consumer
		r, err = ring.reader(t)
		if err != nil {
			t.Fatalf("third reader refused what the first accepted: %v", err)
		}
		r.SetDeadline(time.Now())
		var rec Record
		for step := 0; step < 2*size/headerSize; step++ {
			// Each step reads one record, or loops over up to three.
			if schedule>>(step%8)&1 == 0 {
				if err := r.ReadInto(&rec); err != nil {
					break
				}
				continue
			}
			n := 0
			for rec, err := range r.Records() {
				if err != nil {
					break
				}
				if !inside(rec.RawSample) {
					t.Fatalf("sample of %d bytes outside the data area", len(rec.RawSample))
				}
				if n++; n == 3 {
					break
				}
			}
			if n < 3 {
				break
			}
		}
		if c := &r.consumers[0]; !c.claims.Empty() && c.err == nil {
			t.Fatalf("claims left after every read returned: %+v", c.claims)
		}
		r.Close()
	})
}
