//go:build linux

package rawring

import (
	"errors"
	"testing"
)

// ringCase is ring content that both readers are tested on: what the
// producer wrote and what a reader that asks for want samples must see.
type ringCase struct {
	name      string
	size      uint64
	start     uint64 // consumer and producer position before the records
	setup     func(f *fakeRing)
	want      int    // samples asked for
	wantHead  uint64 // Touch sum of the samples read, head only
	wantAll   uint64 // Touch sum with all
	wantErr   error  // nil, ErrEmpty, ErrBusy or ErrCorrupt
	wantAfter uint64 // consumer position published at the end, from start
}

var ringCases = []ringCase{
	{
		name: "ready records",
		size: 4096,
		setup: func(f *fakeRing) {
			f.put(16, 0, 10) // words 10, 11
			f.put(24, 0, 20) // words 20, 21, 22
		},
		want: 2, wantHead: 30, wantAll: 10 + 11 + 20 + 21 + 22, wantAfter: 24 + 32,
	},
	{
		name: "discarded record skipped",
		size: 4096,
		setup: func(f *fakeRing) {
			f.put(16, discardBit, 1000)
			f.put(8, 0, 7)
		},
		want: 1, wantHead: 7, wantAll: 7, wantAfter: 24 + 16,
	},
	{
		name: "padding after a short sample",
		size: 4096,
		setup: func(f *fakeRing) {
			f.put(12, 0, 5) // one whole word, then 4 bytes of padding
			f.put(8, 0, 6)
		},
		want: 2, wantHead: 11, wantAll: 11, wantAfter: 24 + 16,
	},
	{
		name: "long records, looked ahead of",
		size: 2048, // the look-ahead of the last record wraps around the ring
		setup: func(f *fakeRing) {
			f.put(504, 0, 100) // 63 words from 100
			f.put(504, 0, 200)
			f.put(504, 0, 300)
		},
		want: 3, wantHead: 600, wantAll: wordSum(100, 63) + wordSum(200, 63) + wordSum(300, 63), wantAfter: 3 * 512,
	},
	{
		name:  "record wrapping around the end",
		size:  64,
		start: 48, // header at 48, sample 56..79 wraps to 0..15
		setup: func(f *fakeRing) {
			f.put(24, 0, 3)
		},
		want: 1, wantHead: 3, wantAll: 3 + 4 + 5, wantAfter: 32,
	},
	{
		name: "busy record stops the read",
		size: 4096,
		setup: func(f *fakeRing) {
			f.put(8, 0, 1)
			f.put(8, busyBit, 2)
			f.put(8, 0, 3)
		},
		want: 3, wantHead: 1, wantAll: 1, wantErr: ErrBusy, wantAfter: 16,
	},
	{
		name: "empty ring",
		size: 4096,
		setup: func(f *fakeRing) {
			f.put(8, 0, 1)
		},
		want: 2, wantHead: 1, wantAll: 1, wantErr: ErrEmpty, wantAfter: 16,
	},
	{
		name: "length past the producer",
		size: 4096,
		setup: func(f *fakeRing) {
			f.put(8, 0, 1)
			f.put(8, 0, 2)
			f.write(16, []byte{0xff, 0x0f, 0, 0}) // second header: 4095 bytes
		},
		want: 2, wantHead: 1, wantAll: 1, wantErr: ErrCorrupt, wantAfter: 16,
	},
	{
		name: "producer more than a ring ahead",
		size: 64,
		setup: func(f *fakeRing) {
			f.producer += 128
		},
		want: 1, wantErr: ErrCorrupt,
	},
}

// wordSum is first + (first+1) + ... over count words.
func wordSum(first, count uint64) uint64 {
	return count*first + count*(count-1)/2
}

// prepare builds c's ring at c.start.
func (c ringCase) prepare(t *testing.T) *fakeRing {
	t.Helper()
	f := newFakeRing(t, c.size)
	f.consumer, f.producer = c.start, c.start
	c.setup(f)
	return f
}

// check compares what a reader returned with c.
func (c ringCase) check(t *testing.T, f *fakeRing, all bool, sum uint64, err error) {
	t.Helper()
	want := c.wantHead
	if all {
		want = c.wantAll
	}
	if !errors.Is(err, c.wantErr) || (err != nil) != (c.wantErr != nil) {
		t.Errorf("err = %v, want %v", err, c.wantErr)
	}
	if sum != want {
		t.Errorf("sum = %d, want %d", sum, want)
	}
	if got := f.consumer - c.start; got != c.wantAfter {
		t.Errorf("published consumer position start+%d, want start+%d", got, c.wantAfter)
	}
}

// readers are the ways to drain a ring that every test case runs through.
var readers = []struct {
	name  string
	drain func(r *Ring, n int, all bool) (uint64, error)
}{
	{"floor", func(r *Ring, n int, all bool) (uint64, error) { return NewFloor(r).Drain(n, all) }},
	{"lease", func(r *Ring, n int, all bool) (uint64, error) { return drainLease(NewRawReader(r), n, all) }},
}

func TestReadersOnRingCases(t *testing.T) {
	for _, rd := range readers {
		for _, c := range ringCases {
			for _, all := range []bool{false, true} {
				t.Run(rd.name+"/"+c.name, func(t *testing.T) {
					f := c.prepare(t)
					sum, err := rd.drain(f.ring, c.want, all)
					c.check(t, f, all, sum, err)
				})
			}
		}
	}
}

// A Floor keeps its place between drains and loads the producer again
// only when it has read everything it saw.
func TestFloorResumes(t *testing.T) {
	f := newFakeRing(t, 4096)
	f.put(8, 0, 1)
	f.put(8, 0, 2)
	floor := NewFloor(f.ring)
	if sum, err := floor.Drain(1, false); err != nil || sum != 1 {
		t.Fatalf("first drain: sum %d, err %v; want 1, nil", sum, err)
	}
	f.put(8, 0, 3) // produced after the floor last looked
	if sum, err := floor.Drain(2, false); err != nil || sum != 5 {
		t.Fatalf("second drain: sum %d, err %v; want 2+3, nil", sum, err)
	}
	if f.consumer != f.producer {
		t.Errorf("published consumer position %d, want the producer's %d", f.consumer, f.producer)
	}
}

func TestTouch(t *testing.T) {
	sample := make([]byte, 8*9+5) // nine words, then bytes that are no word
	for i := range 9 {
		sample[8*i] = byte(i + 1)
	}
	sample[8*9] = 0xff
	for _, tc := range []struct {
		name   string
		sample []byte
		all    bool
		want   uint64
	}{
		{"head", sample, false, 1},
		{"all words, unrolled and tail", sample, true, 45},
		{"all of one word", sample[:8], true, 1},
		{"head of a short sample", sample[:5], false, 0},
		{"all of a short sample", sample[:5], true, 0},
		{"empty", nil, true, 0},
	} {
		if got := Touch(tc.sample, tc.all); got != tc.want {
			t.Errorf("%s: Touch = %d, want %d", tc.name, got, tc.want)
		}
	}
}
