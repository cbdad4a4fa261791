//go:build linux

package rawring

import (
	"encoding/binary"
	"testing"
)

// fakeRing is ring memory in the Go heap, laid out as the kernel lays it
// out, so the readers can be tested without BPF.
type fakeRing struct {
	consumer, producer uint64
	data               []byte // the data area twice, kept identical
	size               uint64
	ring               *Ring
}

func newFakeRing(t *testing.T, size uint64) *fakeRing {
	t.Helper()
	f := &fakeRing{data: make([]byte, 2*size), size: size}
	r, err := newRing(&f.consumer, &f.producer, f.data)
	if err != nil {
		t.Fatal(err)
	}
	f.ring = r
	return f
}

// write puts b at position pos, in both copies of the data area.
func (f *fakeRing) write(pos uint64, b []byte) {
	for i, c := range b {
		offset := (pos + uint64(i)) & (f.size - 1)
		f.data[offset] = c
		f.data[offset+f.size] = c
	}
}

// put appends a record of length bytes whose 8-byte words hold first,
// first+1, ...; flags go into the header's length word (busyBit,
// discardBit). It moves the producer position past the record.
func (f *fakeRing) put(length uint32, flags uint32, first uint64) {
	var header [headerSize]byte
	binary.NativeEndian.PutUint32(header[:], length|flags)
	f.write(f.producer, header[:])
	sample := make([]byte, length)
	for i := 0; i+8 <= len(sample); i += 8 {
		binary.NativeEndian.PutUint64(sample[i:], first+uint64(i/8))
	}
	f.write(f.producer+headerSize, sample)
	f.producer += recordStep(length)
}
