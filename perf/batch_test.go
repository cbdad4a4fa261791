//go:build linux

package perf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestBatchesCPUs: records written on each CPU arrive once, in order per
// CPU, in batches of one CPU that Batch.CPU names, whether the inner loop
// reads a batch whole or breaks after some samples (the rest goes back
// and comes again); every sample is a view whose capacity is its length;
// when the loop ends, every CPU's data_tail is its data_head.
func TestBatchesCPUs(t *testing.T) {
	for _, perBatch := range []int{0, 1, 7} {
		t.Run(fmt.Sprintf("perBatch=%d", perBatch), func(t *testing.T) {
			m := newEventArray(t)
			r := newTestReader(t, m, 1<<16, ReaderOptions{})
			const size, n = 40, 400 // 22,400 bytes a CPU: batches of 8 KiB
			p := newProducer(t, m, size)
			cpus := bpftest.CPUs(t)
			for _, cpu := range cpus {
				runOn(t, p, cpu, n)
			}
			r.SetDeadline(time.Now())
			last := map[int]uint64{}
			perCPU := map[int]int{}
			batches := 0
			var end error
			for b, err := range r.Batches() {
				if err != nil {
					end = err
					continue // the last pair
				}
				batches++
				k := 0
				for sample := range b.Samples() {
					if cap(sample) != len(sample) {
						t.Fatalf("sample cap %d, len %d: an append would write into the buffer", cap(sample), len(sample))
					}
					seq := checkSample(t, sample, size)
					// The producer numbers its records across CPUs: the
					// first n are the first CPU's, and so on.
					if want := cpus[seq/n]; b.CPU() != want {
						t.Fatalf("record %d in a batch of CPU %d, written on CPU %d", seq, b.CPU(), want)
					}
					if prev, ok := last[b.CPU()]; ok && seq != prev+1 {
						t.Fatalf("CPU %d: record %d after %d", b.CPU(), seq, prev)
					}
					last[b.CPU()] = seq
					perCPU[b.CPU()]++
					if k++; k == perBatch {
						break
					}
				}
				if lost := b.LostSamples(); lost != 0 {
					t.Fatalf("%d samples lost in a buffer with room", lost)
				}
			}
			if !errors.Is(end, os.ErrDeadlineExceeded) {
				t.Fatalf("ended with %v, want the deadline", end)
			}
			for _, cpu := range cpus {
				if perCPU[cpu] != n {
					t.Fatalf("records per CPU: %v, want %d on each of %v", perCPU, n, cpus)
				}
			}
			if least := len(cpus) * 3; batches < least {
				t.Fatalf("%d batches, want at least %d: 8 KiB each", batches, least)
			}
			for i := range r.consumers {
				if c := &r.consumers[i]; c.buf.loadTail() != c.buf.loadHead(0) {
					t.Fatalf("CPU %d: data_tail %d, data_head %d after the loop", c.cpu, c.buf.loadTail(), c.buf.loadHead(0))
				}
			}
		})
	}
}

// TestBatchesOtherRecords: in a fake buffer, a record of lost samples is
// counted by its batch, a record of an unknown type ends the batch's
// samples and comes as an error the loop goes on after (with the rest of
// the batch), and a corrupt record ends the loop with ErrCorrupt. A loop
// that breaks at the unknown type's error, or whose body leaves a batch
// unread, leaves the rest to the next loop.
func TestBatchesOtherRecords(t *testing.T) {
	f := newFakeBuffer(t, 4096)
	pos := f.writeSample(0, []byte{1})
	pos = f.write(pos, 77, make([]byte, 8)) // unknown type
	pos = f.writeSample(pos, []byte{2})
	lost := make([]byte, 16)
	binary.NativeEndian.PutUint64(lost[8:], 42)
	pos = f.write(pos, recordLost, lost)
	pos = f.writeSample(pos, []byte{3})
	bad := f.write(pos, recordSample, make([]byte, 16))
	binary.NativeEndian.PutUint32(f.data[pos+headerSize:], 4000) // claims more than the record
	f.setPositions(bad, 0)

	// run ranges over Batches, breaking at the first batch, unread, or at
	// the first unknown type's error, as stop says, and describes what it
	// was handed.
	run := func(r *Reader, stop string) string {
		var got []string
		for b, err := range r.Batches() {
			switch {
			case IsUnknownEvent(err):
				got = append(got, "unknown")
				if stop == "unknown" {
					return strings.Join(got, ", ")
				}
				continue
			case errors.Is(err, ErrCorrupt):
				got = append(got, "corrupt")
				continue
			case err != nil:
				got = append(got, err.Error())
				continue
			}
			if stop == "unread" {
				got = append(got, fmt.Sprintf("CPU %d unread", b.CPU()))
				break
			}
			var firsts []byte
			for sample := range b.Samples() {
				firsts = append(firsts, sample[0])
			}
			for range b.Samples() {
				t.Fatal("Samples again, before the loop yielded what stopped it, yielded a sample")
			}
			got = append(got, fmt.Sprintf("CPU %d %v lost %d", b.CPU(), firsts, b.LostSamples()))
		}
		return strings.Join(got, ", ")
	}
	for _, tc := range []struct {
		name string
		runs func(r *Reader) []string
		want []string
	}{
		{"whole", func(r *Reader) []string { return []string{run(r, "")} },
			[]string{"CPU 0 [1] lost 0, unknown, CPU 0 [2 3] lost 42, corrupt"}},
		{"break at the unknown type", func(r *Reader) []string { return []string{run(r, "unknown"), run(r, "")} },
			[]string{"CPU 0 [1] lost 0, unknown", "CPU 0 [2 3] lost 42, corrupt"}},
		{"a batch left unread", func(r *Reader) []string { return []string{run(r, "unread"), run(r, "")} },
			[]string{"CPU 0 unread", "CPU 0 [1] lost 0, unknown, CPU 0 [2 3] lost 42, corrupt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.setPositions(bad, 0)
			r, err := fakeReader(t, false, f)
			if err != nil {
				t.Fatal(err)
			}
			r.SetDeadline(time.Now())
			if got := tc.runs(r); !slices.Equal(got, tc.want) {
				t.Fatalf("loops were handed\n%q\nwant\n%q", got, tc.want)
			}
			if tail := f.u64(tailOffset); tail != pos {
				t.Fatalf("data_tail %d, want %d: up to the corrupt record", tail, pos)
			}
		})
	}
}

// TestBatchesBreakAndPanic: breaking the inner and the outer loop gives
// back the rest of the batch, and the kernel's data_tail covers every
// sample handed out; a panic in the inner body counts the sample it was
// handed as consumed, unwinds and publishes; a body that leaves its batch
// unread consumes nothing. The next record is the one after.
func TestBatchesBreakAndPanic(t *testing.T) {
	r, checkTail := tenSamplesOnOneCPU(t)

	for b, err := range r.Batches() {
		if err != nil {
			t.Fatal(err)
		}
		for sample := range b.Samples() {
			checkSample(t, sample, 32)
			break
		}
		break
	}
	checkTail("a break at the first sample", 1)

	for b, err := range r.Batches() {
		if err != nil {
			t.Fatal(err)
		}
		_ = b // unread
		break
	}
	checkTail("a batch left unread", 1)

	bpftest.PanicsWith(t, "boom", "the body's", func() {
		for b, err := range r.Batches() {
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for sample := range b.Samples() {
				if seq := checkSample(t, sample, 32); seq != uint64(1+n) {
					t.Fatalf("record %d, want %d", seq, 1+n)
				}
				if n++; n == 2 {
					panic("boom")
				}
			}
		}
	})
	checkTail("a panic at the second sample", 3)

	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if seq := checkSample(t, rec.RawSample, 32); seq != 3 {
		t.Fatalf("Read after the panic: record %d, want 3", seq)
	}
	checkTail("Read", 4)
}

// TestBatchAfterLoop: a batch kept past its loop, whether the loop broke,
// ended with an error or its reader was closed and freed, yields nothing
// (in a child process: a walk of an unmapped buffer faults) and still
// names its CPU; the records it did not hand out go to the next loop.
func TestBatchAfterLoop(t *testing.T) {
	bpftest.InChild(t, time.Minute, func(t *testing.T) {
		m := newEventArray(t)
		before := bpftest.OpenResources(t)
		r, err := NewReader(m, 1<<16)
		bpftest.SkipIfNoPerfEventArray(t, err)
		p := newProducer(t, m, 16)
		cpu := bpftest.CPUs(t)[0]
		runOn(t, p, cpu, 10)

		keep := func(ended string) *Batch {
			t.Helper()
			var kept *Batch
			for b, err := range r.Batches() {
				if err != nil {
					if ended == "break" || !errors.Is(err, os.ErrDeadlineExceeded) {
						t.Fatalf("loop ended with %v", err)
					}
					break
				}
				if kept == nil {
					kept = b
				}
				if ended == "break" {
					for sample := range b.Samples() {
						checkSample(t, sample, 16)
						break
					}
					break
				}
				for sample := range b.Samples() {
					checkSample(t, sample, 16)
				}
			}
			if kept == nil {
				t.Fatalf("no batch before the loop ended (%s)", ended)
			}
			return kept
		}
		check := func(b *Batch, when string) {
			t.Helper()
			for range b.Samples() {
				t.Fatalf("a batch kept past its loop yielded a sample (%s)", when)
			}
			if b.CPU() != cpu {
				t.Fatalf("a batch kept past its loop names CPU %d, want %d (%s)", b.CPU(), cpu, when)
			}
		}
		broke := keep("break")
		check(broke, "after a break")
		r.SetDeadline(time.Now())
		check(keep("deadline"), "after the deadline") // 9 records left by the break
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if bpftest.StillMapped(t, before) {
			t.Fatal("a closed reader that nobody reads is not freed")
		}
		check(broke, "after Close")
	})
}

// TestBatchesCloseInBody: Close from a Batches body returns at once; the
// batch the body holds stays readable to its end, and the loop then ends
// with ErrClosed, the reader freed.
func TestBatchesCloseInBody(t *testing.T) {
	m := newEventArray(t)
	before := bpftest.OpenResources(t)
	r := newTestReader(t, m, 1<<16, ReaderOptions{})
	p := newProducer(t, m, 64)
	runOn(t, p, bpftest.CPUs(t)[0], 10)
	n := 0
	var end error
	for b, err := range r.Batches() {
		if err != nil {
			end = err
			continue
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		for sample := range b.Samples() {
			if seq := checkSample(t, sample, 64); seq != uint64(n) {
				t.Fatalf("record %d, want %d", seq, n)
			}
			n++
		}
	}
	if n != 10 || !errors.Is(end, ErrClosed) {
		t.Fatalf("%d records, then %v: want 10, then ErrClosed", n, end)
	}
	if bpftest.StillMapped(t, before) {
		t.Fatal("resources not freed once the loop ended")
	}
}
