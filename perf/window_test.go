//go:build linux

package perf

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// An overwritable buffer read in windows: each window is taken by a claim
// of a paused Reader, and none survives a Resume (the review of
// 2026-12-07 found records handed out twice, and torn).

// overwriteFake is a fake overwritable buffer of 4 KiB written backwards,
// as the kernel does, with 256-byte records carrying 1, 2, 3...
type overwriteFake struct {
	t    *testing.T
	f    *fakeBuffer
	head uint64
	seq  uint64
}

func (o *overwriteFake) write(n int) {
	for range n {
		o.seq++
		data := make([]byte, 244)
		binary.LittleEndian.PutUint64(data, o.seq)
		o.head -= 256
		o.f.writeSample(o.head, data)
		o.f.setU64(headOffset, o.head)
	}
}

// readAll reads until the deadline, failing on a record handed out twice
// or out of the newest-first order within one read of the buffer.
func (o *overwriteFake) readAll(r *Reader, seen map[uint64]bool) []uint64 {
	o.t.Helper()
	r.SetDeadline(time.Now())
	var got []uint64
	for {
		rec, err := r.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got
		}
		if err != nil {
			o.t.Fatal(err)
		}
		s := binary.LittleEndian.Uint64(rec.RawSample)
		if seen[s] {
			o.t.Errorf("record %d handed out twice (read so far %v)", s, got)
		}
		if len(got) > 0 && s >= got[len(got)-1] {
			o.t.Errorf("record %d after %d: not newest first", s, got[len(got)-1])
		}
		seen[s] = true
		got = append(got, s)
	}
}

func newOverwriteFake(t *testing.T) (*overwriteFake, *Reader) {
	f := newFakeBuffer(t, 4096)
	r, err := fakeReader(t, true, f)
	if err != nil {
		t.Fatal(err)
	}
	return &overwriteFake{t: t, f: f}, r
}

// TestWindowNotTakenUnpaused: a settle while not paused (ReadinessFD here)
// takes no window, so records the kernel then writes over are not read
// again from the old window's positions.
func TestWindowNotTakenUnpaused(t *testing.T) {
	o, r := newOverwriteFake(t)
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	o.write(4)
	if _, err := r.ReadinessFD(); err != nil {
		t.Fatal(err)
	}
	o.write(16) // wraps the buffer: records 1-4 are gone
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	got := o.readAll(r, map[uint64]bool{})
	if len(got) != 16 || got[0] != 20 {
		t.Errorf("read %v, want 20 down to 5", got)
	}
}

// TestWindowDroppedOnResume: what a paused read left of its window is not
// read after a Resume, when the kernel may have written over it.
func TestWindowDroppedOnResume(t *testing.T) {
	o, r := newOverwriteFake(t)
	o.write(4)
	seen := map[uint64]bool{}
	rec, err := r.Read() // the newest of a window of four
	if err != nil {
		t.Fatal(err)
	}
	seen[binary.LittleEndian.Uint64(rec.RawSample)] = true
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	o.write(16)
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	if got := o.readAll(r, seen); len(got) == 0 || got[0] != 20 {
		t.Errorf("read %v after Resume and Pause, want the newest, 20, first", got)
	}
}

// TestResumeRefusedWhileHeld: Resume of an overwritable Reader fails,
// changing nothing, while a loop body holds records, and works once the
// loop has ended.
func TestResumeRefusedWhileHeld(t *testing.T) {
	for _, style := range []string{"records", "batches"} {
		t.Run(style, func(t *testing.T) {
			o, r := newOverwriteFake(t)
			o.write(4)
			r.SetDeadline(time.Now())
			body := func([]byte) {
				if err := r.Resume(); !errors.Is(err, errResumeHeld) {
					t.Errorf("Resume while a body holds records: %v, want errResumeHeld", err)
				}
			}
			if style == "records" {
				for rec, err := range r.Records() {
					if err == nil {
						body(rec.RawSample)
					}
					break
				}
			} else {
				for b, err := range r.Batches() {
					if err == nil {
						for s := range b.Samples() {
							body(s)
							break
						}
					}
					break
				}
			}
			if err := r.Resume(); err != nil {
				t.Errorf("Resume after the loop: %v", err)
			}
		})
	}
}

// TestResumeWhileReading: a producer on CPU 0, loops of a paused
// overwritable Reader whose body sometimes dawdles, and Resume at random
// instants: no record is handed out torn or twice. Each read waits for a
// run of the producer that began after Pause: one in flight at Pause may
// still write the oldest record (docs/perf.md), which is not what this
// test is about.
func TestResumeWhileReading(t *testing.T) {
	const size = 248
	m := newEventArray(t)
	r := newTestReader(t, m, 4*os.Getpagesize(), ReaderOptions{Overwritable: true})
	p, err := progs.NewPerfProducer(progs.PerfSpec{Events: m, Size: size, Pattern: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	var stop atomic.Bool
	var runs atomic.Uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		unpin, err := cpustat.Pin(0)
		if err != nil {
			return
		}
		defer unpin()
		for !stop.Load() {
			p.Run(1) // fails while paused: nothing written
			runs.Add(1)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	seen := map[uint64]bool{}
	for round := range 300 {
		if err := r.Pause(); err != nil {
			t.Fatal(err)
		}
		for n := runs.Load(); runs.Load() < n+2; {
			time.Sleep(10 * time.Microsecond)
		}
		resumed := make(chan error, 1)
		go func() {
			time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
			resumed <- r.Resume()
		}()
		r.SetDeadline(time.Now())
		for rec, err := range r.Records() {
			if err != nil {
				break
			}
			if rec.LostSamples > 0 {
				continue
			}
			s, err := progs.CheckRecord(rec.RawSample[:min(len(rec.RawSample), size)], size, true)
			if err != nil {
				t.Fatalf("round %d: torn record: %v", round, err)
			}
			if seen[s] {
				t.Fatalf("round %d: record %d handed out twice", round, s)
			}
			seen[s] = true
			if rand.IntN(8) == 0 {
				time.Sleep(20 * time.Microsecond) // a body holding its record
			}
		}
		if err := <-resumed; err != nil && !errors.Is(err, errResumeHeld) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Microsecond) // the producer writes over the buffer
	}
	if len(seen) == 0 {
		t.Error("no record read in 300 rounds")
	}
}

// TestReadTakesTurns: ReadInto moves on to the other CPUs once it caught
// up with what it found of one, even if that CPU's producer keeps ahead.
func TestReadTakesTurns(t *testing.T) {
	f0, f1 := newFakeBuffer(t, 4096), newFakeBuffer(t, 4096)
	r, err := fakeReader(t, false, f0, f1)
	if err != nil {
		t.Fatal(err)
	}
	h0 := f0.writeSample(0, make([]byte, 8))
	f0.setPositions(h0, 0)
	h1 := f1.writeSample(0, make([]byte, 8))
	f1.setPositions(h1, 0)
	for i := range 100 {
		rec, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if rec.CPU == 1 {
			return
		}
		h0 = f0.writeSample(h0, make([]byte, 8)) // CPU 0's producer keeps ahead
		f0.setU64(headOffset, h0)
		if i > 2 {
			t.Fatalf("CPU 1's record not read after %d reads of CPU 0", i+1)
		}
	}
}
