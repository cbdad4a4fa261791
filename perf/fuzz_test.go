//go:build linux

package perf

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"
	"time"
	"unsafe"
)

// TestFakeBufferWrap: samples of odd sizes written around the end of a
// fake buffer come out whole from ReadInto, Records and Batches, and a
// lost record as LostSamples.
func TestFakeBufferWrap(t *testing.T) {
	const size = 4096
	f := newFakeBuffer(t, size)
	for _, start := range []uint64{size - 8, size - 16, size - 24, 2*size - 40} {
		var samples [][]byte
		pos := start
		for i, n := range []int{1, 13, 200, 37, 1000} {
			data := make([]byte, n)
			for j := range data {
				data[j] = byte(i*7 + j)
			}
			samples = append(samples, data)
			pos = f.writeSample(pos, data)
		}
		lost := make([]byte, 16)
		binary.NativeEndian.PutUint64(lost[8:], 42)
		pos = f.write(pos, recordLost, lost)
		for _, style := range styles {
			f.setPositions(pos, start)
			r, err := fakeReader(t, false, f)
			if err != nil {
				t.Fatal(err)
			}
			r.SetDeadline(time.Now())
			var got []Record
			if style == "read" {
				got = drainNow(t, r)
			} else {
				for rec, err := range loopOf(r, style) {
					if err != nil {
						break
					}
					got = append(got, Record{RawSample: append([]byte(nil), rec.RawSample...), LostSamples: rec.LostSamples, Remaining: rec.Remaining})
				}
			}
			if len(got) != len(samples)+1 {
				t.Fatalf("start %d, %s: %d records, want %d", start, style, len(got), len(samples)+1)
			}
			for i, want := range samples {
				if g := got[i].RawSample; len(g) != rawLen(len(want)) || string(g[:len(want)]) != string(want) {
					t.Fatalf("start %d, %s: sample %d is %v, want %v", start, style, i, g, want)
				}
			}
			if l := got[len(samples)]; l.LostSamples != 42 || len(l.RawSample) != 0 || l.Remaining != 0 {
				t.Fatalf("start %d, %s: lost record %+v", start, style, l)
			}
			if tail := f.u64(tailOffset); tail != pos {
				t.Fatalf("start %d, %s: data_tail %d after the drain, want %d", start, style, tail, pos)
			}
			r.Close()
		}
	}
}

// TestFakeBufferCorrupt: a header that contradicts the layout ends reads
// with ErrCorrupt, and an unknown record type is skipped with an error
// IsUnknownEvent recognises.
func TestFakeBufferCorrupt(t *testing.T) {
	f := newFakeBuffer(t, 4096)
	pos := f.write(0, 77, make([]byte, 8)) // unknown type
	pos = f.writeSample(pos, []byte{1, 2, 3})
	bad := f.write(pos, recordSample, make([]byte, 16))
	binary.NativeEndian.PutUint32(f.data[pos+headerSize:], 4000) // claims more than the record
	f.setPositions(bad, 0)
	r, err := fakeReader(t, false, f)
	if err != nil {
		t.Fatal(err)
	}
	r.SetDeadline(time.Now())
	if _, err := r.Read(); !IsUnknownEvent(err) {
		t.Fatalf("first read: %v, want an unknown event", err)
	}
	if rec, err := r.Read(); err != nil || rec.RawSample[0] != 1 {
		t.Fatalf("second read: %v %v", rec, err)
	}
	if _, err := r.Read(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("third read: %v, want ErrCorrupt", err)
	} else if !errors.Is(err, io.ErrUnexpectedEOF) {
		// Code written for cilium/ebpf checks for this.
		t.Fatalf("third read: %v does not match io.ErrUnexpectedEOF", err)
	}
	for _, err := range r.Records() {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Records after the corrupt record: %v, want ErrCorrupt", err)
		}
		break
	}
}

// TestBreakOnUnknownEvent: a loop that breaks at an unknown record type
// ends there (a yield after break panics), and the next loop starts after
// it.
func TestBreakOnUnknownEvent(t *testing.T) {
	f := newFakeBuffer(t, 4096)
	pos := f.write(0, 77, make([]byte, 8)) // unknown type
	pos = f.writeSample(pos, []byte{1, 2, 3})
	f.setPositions(pos, 0)
	r, err := fakeReader(t, false, f)
	if err != nil {
		t.Fatal(err)
	}
	r.SetDeadline(time.Now())
	for _, err := range r.Records() {
		if !IsUnknownEvent(err) {
			t.Fatalf("first record: %v, want an unknown event", err)
		}
		break
	}
	for rec, err := range r.Records() {
		if err != nil || rec.RawSample[0] != 1 {
			t.Fatalf("after the unknown record: %v %v", rec, err)
		}
		break
	}
}

// FuzzBuffer fills a 4 KiB fake buffer, followed by a guard page, with
// arbitrary bytes and positions: reading it must end in an error (or the
// deadline), never a panic, a fault or a sample outside the data area, by
// Records, by Batches, by ReadInto, and from an overwritable reader.
func FuzzBuffer(f *testing.F) {
	seed := make([]byte, 64)
	binary.NativeEndian.PutUint32(seed[0:], recordSample)
	binary.NativeEndian.PutUint16(seed[6:], 24)
	binary.NativeEndian.PutUint32(seed[8:], 12)
	binary.NativeEndian.PutUint32(seed[24:], recordLost)
	binary.NativeEndian.PutUint16(seed[30:], 24)
	binary.NativeEndian.PutUint32(seed[48:], recordSample)
	binary.NativeEndian.PutUint16(seed[54:], 0xfff8)
	f.Add(seed, uint64(0), uint64(48), false)
	f.Add(seed, uint64(4096-16), uint64(4096+64), false)
	f.Add(seed, uint64(1<<63), uint64(8), true)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(8), uint64(16), false)

	const size = 4096
	fb := newFakeBuffer(f, size)
	lo := uintptr(unsafe.Pointer(&fb.data[0]))
	inside := func(b []byte) bool {
		if len(b) == 0 {
			return true
		}
		p := uintptr(unsafe.Pointer(&b[0]))
		if p+uintptr(len(b)) <= lo-size || p >= lo+2*size {
			return len(b) <= size // a wrapped sample's copy
		}
		return p >= lo && p+uintptr(len(b)) <= lo+size
	}
	f.Fuzz(func(t *testing.T, contents []byte, tail, head uint64, overwritable bool) {
		clear(fb.data)
		copy(fb.data, contents)
		for _, style := range []string{"records", "batches", "read"} {
			fb.setPositions(head, tail)
			r, err := fakeReader(t, overwritable, fb)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("refused with %v, want ErrCorrupt", err)
				}
				return
			}
			r.SetDeadline(time.Now())
			n := 0
			switch style {
			case "records":
				for rec, err := range r.Records() {
					if err != nil {
						checkEnd(t, err)
						if !IsUnknownEvent(err) {
							break
						}
						continue
					}
					if !inside(rec.RawSample) {
						t.Fatalf("sample of %d bytes outside the data area", len(rec.RawSample))
					}
					if n++; n > size {
						t.Fatal("more records than the buffer holds")
					}
				}
			case "batches":
				for b, err := range r.Batches() {
					if err != nil {
						checkEnd(t, err) // the loop goes on after an unknown type only
						continue
					}
					for sample := range b.Samples() {
						if !inside(sample) {
							t.Fatalf("sample of %d bytes outside the data area", len(sample))
						}
						if n++; n > size {
							t.Fatal("more records than the buffer holds")
						}
					}
				}
			default:
				var rec Record
				for ; n <= size; n++ {
					err := r.ReadInto(&rec)
					if err != nil {
						checkEnd(t, err)
						if !IsUnknownEvent(err) {
							break
						}
					}
				}
				if n > size {
					t.Fatal("more records than the buffer holds")
				}
			}
			if c := &r.consumers[0]; !c.claims.Empty() {
				t.Fatalf("claims left after the reads: %+v", c.claims)
			}
			r.Close()
		}
	})
}

// checkEnd fails unless err is one a read of a fake buffer may end with.
func checkEnd(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, os.ErrDeadlineExceeded) && !IsUnknownEvent(err) {
		t.Fatalf("read ended with %v", err)
	}
}
