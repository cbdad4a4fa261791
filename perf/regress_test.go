//go:build linux

package perf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// Regression tests for issue 27's findings.

// TestFlushEndsEveryWait (finding 1): a Flush ends every loop (Records,
// Batches) that waits when it is called, also while goroutines read again
// at once after their own ErrFlushed: none of them may take the loop's
// flush.
func TestFlushEndsEveryWait(t *testing.T) {
	for _, style := range styles[1:] {
		t.Run(style, func(t *testing.T) {
			r := newTestReader(t, newEventArray(t), 4096, ReaderOptions{})
			bpftest.CheckFlushEndsEveryWait(t, 10, 3, bpftest.FlushTarget{
				Read:       func() error { var rec Record; return r.ReadInto(&rec) },
				Loop:       func() error { return bpftest.LoopUntilError(loopOf(r, style)) },
				Flush:      r.Flush,
				Close:      r.Close,
				Flushed:    ErrFlushed,
				InProgress: r.engine.InProgress,
			})
		})
	}
}

// TestNewReaderAnySize (finding 2): every int size beyond what a buffer
// can be gets a clear error at once.
func TestNewReaderAnySize(t *testing.T) {
	m := newEventArray(t)
	sizes := []int{math.MaxInt, math.MaxInt/2 + 1, math.MaxInt / 4, math.MaxInt >> 23, math.MinInt, -1, 0}
	if strconv.IntSize == 32 {
		// A 32-bit int's middle sizes (1 GiB, 512 MiB, 255 B) are
		// buffers the kernel grants, the largest in seconds; above 1 GiB
		// a buffer rounds up to 2 GiB, more than a mapping can hold.
		sizes = []int{math.MaxInt, math.MaxInt/2 + 2, math.MinInt, -1, 0}
	}
	for _, size := range sizes {
		done := make(chan error, 1)
		go func() {
			r, err := NewReader(m, size)
			if err == nil {
				r.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("NewReader(%d) succeeded", size)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("NewReader(%d) did not return", size)
		}
	}
}

// TestReadIntoView (finding 3): ReadInto into a record whose RawSample is
// a view of a buffer (from Records, in its body or kept past it) copies
// into new memory, never into the view.
func TestReadIntoView(t *testing.T) {
	m := newEventArray(t)
	r := newTestReader(t, m, 1<<16, ReaderOptions{})
	p := newProducer(t, m, 64)
	cpu := bpftest.CPUs(t)[0]
	runOn(t, p, cpu, 1)

	var kept Record
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		kept = *rec
		first := checkSample(t, rec.RawSample, 64)
		runOn(t, p, cpu, 1) // past the loop's batch, for ReadInto
		if err := r.ReadInto(rec); err != nil {
			t.Fatal(err)
		}
		if second := checkSample(t, rec.RawSample, 64); second != first+1 {
			t.Fatalf("ReadInto in the body read record %d after %d", second, first)
		}
		break
	}
	runOn(t, p, cpu, 1)
	if err := r.ReadInto(&kept); err != nil {
		t.Fatal(err)
	}
	checkSample(t, kept.RawSample, 64)
}

// TestReadIntoViewOfOtherReader: a view from one Reader's Records, its
// Reader open or closed, handed to another Reader's ReadInto gets a copy
// in new memory, never one written into the other reader's buffer (the
// kernel's) or into unmapped memory. In a child process: that faults.
func TestReadIntoViewOfOtherReader(t *testing.T) {
	bpftest.InChild(t, time.Minute, func(t *testing.T) {
		cpu := bpftest.CPUs(t)[0]
		ma, mb, mc := newEventArray(t), newEventArray(t), newEventArray(t)
		ra, rb := newTestReader(t, ma, 1<<16, ReaderOptions{}), newTestReader(t, mb, 1<<16, ReaderOptions{})
		rc, err := NewReader(mc, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*ebpf.Map{ma, mc} {
			runOn(t, newProducer(t, m, 64), cpu, 1)
		}
		open, closed := bpftest.First(t, ra.Records()), bpftest.First(t, rc.Records())
		openView := open.RawSample
		openCopy := bytes.Clone(openView)
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		pb := newProducer(t, mb, 64)
		for _, rec := range []*Record{&open, &closed} {
			runOn(t, pb, cpu, 1)
			if err := rb.ReadInto(rec); err != nil {
				t.Fatal(err)
			}
			checkSample(t, rec.RawSample, 64)
		}
		if !bytes.Equal(openCopy, openView) {
			t.Fatal("ReadInto wrote into the open reader's view")
		}
	})
}

// TestNewReaderBadOptions: a negative or out-of-range WakeupEvents or
// Watermark gets an error, not a silently different wakeup.
func TestNewReaderBadOptions(t *testing.T) {
	m := newEventArray(t)
	bad := []ReaderOptions{
		{WakeupEvents: -1},
		{Watermark: -1},
		{WakeupEvents: math.MinInt},
	}
	if beyond := uint64(math.MaxUint32) + 1; uint64(math.MaxInt) >= beyond {
		// A 64-bit int only holds more than the kernel's u32; a 32-bit
		// one's MaxInt is a valid WakeupEvents.
		bad = append(bad, ReaderOptions{WakeupEvents: int(beyond)}, ReaderOptions{WakeupEvents: math.MaxInt})
	}
	for _, opts := range bad {
		r, err := NewReaderWithOptions(m, 1<<16, opts)
		if err == nil {
			r.Close()
			t.Errorf("NewReaderWithOptions(%+v) succeeded", opts)
		}
	}
}

// TestReadIntoViewOfOtherCPU: ReadInto into a record whose RawSample is a
// view of one CPU's buffer, reading another CPU's record, copies into new
// memory: the view's buffer is left as it was, in the body and after it.
func TestReadIntoViewOfOtherCPU(t *testing.T) {
	const size = 1 << 12
	fakes := []*fakeBuffer{newFakeBuffer(t, size), newFakeBuffer(t, size)}
	for i, f := range fakes {
		var head uint64
		for range 2 {
			head = f.writeSample(head, bytes.Repeat([]byte{byte('a' + i)}, 16))
		}
		f.setPositions(head, 0)
	}
	r, err := fakeReader(t, false, fakes...)
	if err != nil {
		t.Fatal(err)
	}
	before := bytes.Clone(fakes[0].data)
	var kept Record
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.CPU != 0 {
			t.Fatalf("the loop began on CPU %d, want 0", rec.CPU)
		}
		kept = *rec
		if err := r.ReadInto(rec); err != nil { // CPU 1's turn
			t.Fatal(err)
		}
		if rec.CPU != 1 || rec.RawSample[0] != 'b' {
			t.Fatalf("ReadInto in the body read CPU %d's %q, want CPU 1's", rec.CPU, rec.RawSample)
		}
		break
	}
	if !bytes.Equal(fakes[0].data, before) {
		t.Fatal("ReadInto in the body wrote into CPU 0's buffer, through the view")
	}
	if err := r.ReadInto(&kept); err != nil {
		t.Fatal(err)
	}
	if kept.CPU != 1 || kept.RawSample[0] != 'b' {
		t.Fatalf("ReadInto after the loop read CPU %d's %q, want CPU 1's", kept.CPU, kept.RawSample)
	}
	if !bytes.Equal(fakes[0].data, before) {
		t.Fatal("ReadInto after the loop wrote into CPU 0's buffer, through a kept view")
	}
}

// TestNilRecord: ReadInto refuses a nil *Record with an error that says
// so, before it reads: the record is still the next one Read gets.
func TestNilRecord(t *testing.T) {
	m := newEventArray(t)
	r := newTestReader(t, m, 4096, ReaderOptions{})
	p := newProducer(t, m, 16)
	runOn(t, p, bpftest.CPUs(t)[0], 1)
	err := r.ReadInto(nil)
	if !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "nil *Record") {
		t.Errorf("ReadInto(nil): %v, want an error matching os.ErrInvalid that names the nil *Record", err)
	}
	r.SetDeadline(time.Now())
	rec, err := r.Read()
	if err != nil {
		t.Fatalf("Read after the refused ReadInto: %v", err)
	}
	if seq := checkSample(t, rec.RawSample, 16); seq != 0 {
		t.Fatalf("read record %d, want 0", seq)
	}
}

// TestClosedMap: NewReader given a closed array says its descriptor is
// closed, not that the map is of the wrong kind.
func TestClosedMap(t *testing.T) {
	m := newEventArray(t)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := NewReader(m, 4096)
	if !errors.Is(err, syscall.EBADF) || errors.Is(err, ebpf.ErrNotSupported) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("NewReader of a closed array: %v; want an error about its closed descriptor", err)
	}
}

// TestReadIntoCallerMemoryRemappedAsBuffer: memory a caller lent
// ReadInto, then unmapped, may come back as another Reader's buffer at the
// same address; a view there handed to the first Reader's ReadInto gets a
// copy in new memory, as any view does. A one-CPU Reader's samples start
// a page into its mapping.
func TestReadIntoCallerMemoryRemappedAsBuffer(t *testing.T) {
	bpftest.InChild(t, time.Minute, func(t *testing.T) {
		page := os.Getpagesize()
		cpu := bpftest.CPUs(t)[0]
		ma, mb := newEventArray(t), newEventArray(t)
		ra := newTestReader(t, ma, 4096, ReaderOptions{})
		runOn(t, newProducer(t, ma, 40), cpu, 2)
		pb := newProducer(t, mb, 40)
		readInto := func(dst []byte) []byte {
			rec := Record{RawSample: dst}
			if err := ra.ReadInto(&rec); err != nil {
				t.Fatal(err)
			}
			return rec.RawSample
		}
		open := func() []byte {
			rb, err := NewCPUReader(mb, cpu, 4096, ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rb.Close() })
			runOn(t, pb, cpu, 1)
			return bpftest.First(t, rb.Records()).RawSample
		}
		bpftest.CheckCopyIntoRemappedMemory(t, page+4096, page+sampleHeaderSize, readInto, open)
	})
}
