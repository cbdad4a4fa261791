//go:build linux

package ringbuf

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func TestReadInOrder(t *testing.T) {
	for _, method := range []progs.Method{progs.Reserve, progs.Output} {
		t.Run(method.String(), func(t *testing.T) {
			m := newRingMap(t, 4096)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 40, Method: method, Pattern: true})
			r := newTestReader(t, m)
			produce(t, p, 10)
			for want := uint64(0); want < 10; want++ {
				rec, err := r.Read()
				if err != nil {
					t.Fatal(err)
				}
				seq, err := progs.CheckRecord(rec.RawSample, 40, true)
				if err != nil {
					t.Fatal(err)
				}
				if seq != want {
					t.Fatalf("record %d has sequence number %d", want, seq)
				}
				if wantRemaining := int(9-want) * 48; rec.Remaining != wantRemaining {
					t.Errorf("record %d: Remaining %d, want %d", want, rec.Remaining, wantRemaining)
				}
			}
			if n := r.AvailableBytes(); n != 0 {
				t.Errorf("AvailableBytes after the last record: %d", n)
			}
			r.SetDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read on an empty ring past the deadline: %v", err)
			}
		})
	}
}

func TestNewReaderRejectsOtherMaps(t *testing.T) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	bpftest.SkipIfNoRingBuf(t, err)
	defer m.Close()
	_, err = NewReader(m)
	if err == nil || !strings.Contains(err.Error(), "Array") {
		t.Fatalf("NewReader on an array map: %v, want an error naming its type", err)
	}
	if _, err := NewReader(nil); err == nil {
		t.Fatal("NewReader(nil) succeeded")
	}
}

func TestReadCopies(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 24, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 1)
	first, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if r.consumers[0].ring.isView(first.RawSample) {
		t.Fatal("Read returned a view into the ring")
	}
	// Overwrite the ring many times: the copy must not change.
	for range 400 {
		produce(t, p, 1)
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if seq, err := progs.CheckRecord(first.RawSample, 24, true); err != nil || seq != 0 {
		t.Fatalf("first record changed after reads and Close: seq %d, %v", seq, err)
	}

	// ReadInto reuses a large enough buffer, and never writes into a view.
	r = newTestReader(t, m)
	produce(t, p, 3)
	buf := make([]byte, 0, 64)
	rec := Record{RawSample: buf}
	if err := r.ReadInto(&rec); err != nil {
		t.Fatal(err)
	}
	if &rec.RawSample[0] != &buf[:1][0] {
		t.Error("ReadInto allocated although the buffer was large enough")
	}
	view, err := r.Peek()
	if err != nil {
		t.Fatal(err)
	}
	viewCopy := append([]byte(nil), view.RawSample...)
	rec.RawSample = view.RawSample
	if err := r.ReadInto(&rec); err != nil { // reads the record after the peeked one
		t.Fatal(err)
	}
	if !bytes.Equal(view.RawSample, viewCopy) || r.consumers[0].ring.isView(rec.RawSample) {
		t.Fatal("ReadInto wrote into a peek view")
	}
}

func TestPeekConsume(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 13, Pattern: true}) // odd: len is not the aligned size
	r := newTestReader(t, m)
	if err := r.Consume(); !errors.Is(err, ErrNotPeeked) {
		t.Fatalf("Consume with nothing peeked: %v", err)
	}
	produce(t, p, 3)
	for want := uint64(0); want < 3; want++ {
		a, err := r.Peek()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Peek(); !errors.Is(err, ErrConcurrentPeek) {
			t.Fatalf("peeking again before Consume: %v, want ErrConcurrentPeek", err)
		}
		if len(a.RawSample) != 13 || cap(a.RawSample) != 13 {
			t.Fatalf("view len %d cap %d, want 13 and 13", len(a.RawSample), cap(a.RawSample))
		}
		if !r.consumers[0].ring.isView(a.RawSample) {
			t.Fatal("the view is not in the ring")
		}
		if seq, err := progs.CheckRecord(a.RawSample, 13, true); err != nil || seq != want {
			t.Fatalf("peeked seq %d (%v), want %d", seq, err, want)
		}
		grown := append(a.RawSample, 'x') // must copy, not write into the ring
		if &grown[0] == &a.RawSample[0] {
			t.Fatal("append wrote into the ring")
		}
		if err := r.Consume(); err != nil {
			t.Fatal(err)
		}
		if err := r.Consume(); !errors.Is(err, ErrNotPeeked) {
			t.Fatalf("second Consume: %v", err)
		}
	}
	if n := r.AvailableBytes(); n != 0 {
		t.Errorf("AvailableBytes %d after consuming everything", n)
	}
}

// TestPeekRecordsWrapping peeks records of sizes around cache-line
// multiples through a small ring many times over, so that records wrap
// past its end, and so does the load ahead (loadAhead): every view holds
// its own record, in order.
func TestPeekRecordsWrapping(t *testing.T) {
	for _, size := range []int{120, 121, 184, 185, 250, 256, 257} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			m := newRingMap(t, 4096)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: size, Pattern: true})
			r := newTestReader(t, m)
			perRound := (4096 - 1) / ((size+7)&^7 + 8) // the kernel never fills a ring to the last byte
			var want uint64
			for range 20 {
				produce(t, p, perRound)
				for range perRound {
					var rec Record
					if err := r.PeekInto(&rec); err != nil {
						t.Fatal(err)
					}
					if seq, err := progs.CheckRecord(rec.RawSample, size, true); err != nil || seq != want {
						t.Fatalf("peeked seq %d (%v), want %d", seq, err, want)
					}
					if err := r.Consume(); err != nil {
						t.Fatal(err)
					}
					want++
				}
			}
			if n := r.AvailableBytes(); n != 0 {
				t.Errorf("AvailableBytes %d after consuming everything", n)
			}
		})
	}
}

// TestPeekThenOtherReads: a peeked record stays with the peeker while Read
// or Records on the same Reader return the records after it, in order, and
// consuming it afterwards gives all the space back to the kernel.
func TestPeekThenOtherReads(t *testing.T) {
	// Read as an iterator, so both styles share one collecting loop.
	reads := func(r *Reader) iter.Seq2[*Record, error] {
		return func(yield func(*Record, error) bool) {
			for {
				rec, err := r.Read()
				if !yield(&rec, err) || err != nil {
					return
				}
			}
		}
	}
	for _, tc := range []struct {
		name    string
		records func(r *Reader) iter.Seq2[*Record, error]
	}{
		{"Read", reads},
		{"Records", (*Reader).Records},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newRingMap(t, 4096)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 24, Pattern: true})
			r := newTestReader(t, m)
			produce(t, p, 10)
			peek := func(want uint64) Record {
				t.Helper()
				rec, err := r.Peek()
				if err != nil {
					t.Fatal(err)
				}
				if seq, err := progs.CheckRecord(rec.RawSample, 24, true); err != nil || seq != want {
					t.Fatalf("peeked seq %d (%v), want %d", seq, err, want)
				}
				return rec
			}
			for seq := range uint64(3) {
				peek(seq)
				if err := r.Consume(); err != nil {
					t.Fatal(err)
				}
			}
			view := peek(3) // held across the other reads

			r.SetDeadline(time.Now().Add(50 * time.Millisecond))
			var seqs []uint64
			var err error
			for rec, recErr := range tc.records(r) {
				if err = recErr; err != nil {
					break
				}
				seq, checkErr := progs.CheckRecord(rec.RawSample, 24, true)
				if checkErr != nil {
					t.Fatal(checkErr)
				}
				seqs = append(seqs, seq)
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("%s ended with %v, want the deadline", tc.name, err)
			}
			if want := []uint64{4, 5, 6, 7, 8, 9}; fmt.Sprint(seqs) != fmt.Sprint(want) {
				t.Fatalf("%s returned %v, want %v", tc.name, seqs, want)
			}
			if seq, err := progs.CheckRecord(view.RawSample, 24, true); err != nil || seq != 3 {
				t.Fatalf("held view shows seq %d (%v) after the other reads, want 3", seq, err)
			}
			if n := r.AvailableBytes(); n != 7*32 {
				t.Errorf("AvailableBytes %d with record 3 peeked, want %d", n, 7*32)
			}
			if err := r.Consume(); err != nil {
				t.Fatal(err)
			}
			if n := r.AvailableBytes(); n != 0 {
				t.Errorf("AvailableBytes %d after consuming everything", n)
			}
			// The kernel sees it all once a read gives up.
			r.SetDeadline(time.Now())
			if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read on an empty ring: %v", err)
			}
			if got, want := r.consumers[0].ring.loadConsumer(), 10*uint64(32); got != want {
				t.Errorf("kernel consumer position %d, want %d", got, want)
			}
		})
	}
}

func TestRecords(t *testing.T) {
	m := newRingMap(t, 1<<16)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 64, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 100)

	// Break after 10: those 10 are consumed, the rest are not.
	next := uint64(0)
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		seq, err := progs.CheckRecord(rec.RawSample, 64, true)
		if err != nil || seq != next {
			t.Fatalf("record %d: seq %d, %v", next, seq, err)
		}
		next++
		if next == 10 {
			break
		}
	}
	if got, want := r.AvailableBytes(), 90*72; got != want {
		t.Fatalf("AvailableBytes after breaking at 10 of 100: %d, want %d", got, want)
	}
	r.SetDeadline(time.Now().Add(20 * time.Millisecond))
	var last error
	for rec, err := range r.Records() {
		if err != nil {
			last = err
			continue // the error is the last pair: the loop must end here
		}
		if seq, _ := progs.CheckRecord(rec.RawSample, 64, true); seq != next {
			t.Fatalf("after the break: seq %d, want %d", seq, next)
		}
		next++
	}
	if !errors.Is(last, os.ErrDeadlineExceeded) || next != 100 {
		t.Fatalf("loop ended with %v after %d records, want the deadline after 100", last, next)
	}
}

// TestWraparoundOddSizes drives a one-page ring around many times with
// records of several odd sizes interleaved.
func TestWraparoundOddSizes(t *testing.T) {
	m := newRingMap(t, 4096)
	sizes := []int{13, 27, 100, 8, 333}
	var producers []*progs.Producer
	for _, size := range sizes {
		producers = append(producers, newProducer(t, progs.RingbufSpec{Ring: m, Size: size, Pattern: true}))
	}
	r := newTestReader(t, m)
	r.SetDeadline(time.Now().Add(10 * time.Second))
	var rec Record
	for round := range 300 {
		for i, p := range producers {
			produce(t, p, 1+round%3)
			for range 1 + round%3 {
				if err := r.ReadInto(&rec); err != nil {
					t.Fatal(err)
				}
				if _, err := progs.CheckRecord(rec.RawSample, sizes[i], true); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
		}
	}
	if pos := r.consumers[0].claims.ConsumerPos(); pos < 50*4096 {
		t.Fatalf("only %d bytes went through the ring: no wraparound tested", pos)
	}
}

func TestDiscardedSkipped(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, DiscardEvery: 3})
	r := newTestReader(t, m)
	produce(t, p, 30)
	r.SetDeadline(time.Now())
	var got []uint64
	for rec, err := range r.Records() {
		if err != nil {
			break
		}
		seq, _ := progs.CheckRecord(rec.RawSample, 16, false)
		got = append(got, seq)
	}
	if len(got) != 20 {
		t.Fatalf("read %d records, want the 20 not discarded: %v", len(got), got)
	}
	for _, seq := range got {
		if seq%3 == 0 {
			t.Fatalf("discarded record %d was returned", seq)
		}
	}
	if n := r.AvailableBytes(); n != 0 {
		t.Fatalf("discarded space not released: %d bytes left", n)
	}
}

func TestStartsAtMapConsumerPosition(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 8})
	produce(t, p, 10)
	r := newTestReader(t, m)
	for range 3 {
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	r = newTestReader(t, m)
	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := progs.CheckRecord(rec.RawSample, 8, false); seq != 3 {
		t.Fatalf("second reader started at record %d, want 3", seq)
	}
}

func TestRingSizes(t *testing.T) {
	for _, size := range []int{4096, 1 << 20, 1 << 30} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			m, err := progs.NewRing(size)
			if errors.Is(err, unix.ENOMEM) {
				t.Skipf("kernel could not allocate a %d-byte ring: %v", size, err)
			}
			bpftest.SkipIfNoRingBuf(t, err)
			defer m.Close()
			if strconv.IntSize == 32 && size >= 1<<30 {
				// The data area is mapped twice: 2 GiB do not fit.
				if _, err := NewReader(m); !errors.Is(err, unix.ENOMEM) {
					t.Fatalf("NewReader of a %d-byte ring in a 32-bit process: %v, want ENOMEM", size, err)
				}
				return
			}
			r := newTestReader(t, m)
			if r.BufferSize() != size {
				t.Fatalf("BufferSize %d, want %d", r.BufferSize(), size)
			}
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 2000, Pattern: true})
			produce(t, p, 2)
			for range 2 {
				rec, err := r.Read()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := progs.CheckRecord(rec.RawSample, 2000, true); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestCorruptConsumerPosition: a consumer position the kernel's own page
// says is ahead of the producer is reported, not read past.
func TestCorruptConsumerPosition(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 8})
	produce(t, p, 2)
	r := newTestReader(t, m)
	// Ahead in the low 32 bits too, which are all a 32-bit kernel keeps.
	r.consumers[0].ring.publishConsumer(1<<40 | 1<<20)
	r.Close()
	r2, err := NewReader(m)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	r2.SetDeadline(time.Now().Add(time.Second))
	if _, err := r2.Read(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read with the consumer ahead of the producer: %v", err)
	}
}

// TestReadIntoViewOfOtherReader: a view from one Reader's Records, whose
// Reader is open or closed, handed to another Reader's ReadInto gets a
// copy in new memory: the view's memory is read-only (an open ring's) or
// unmapped (a closed one's). In a child process: writing there faults.
func TestReadIntoViewOfOtherReader(t *testing.T) {
	bpftest.InChild(t, time.Minute, func(t *testing.T) {
		ma, mb, mc := newRingMap(t, 4096), newRingMap(t, 4096), newRingMap(t, 4096)
		pb := newProducer(t, progs.RingbufSpec{Ring: mb, Size: 40, Pattern: true})
		ra, rb := newTestReader(t, ma), newTestReader(t, mb)
		rc, err := NewReader(mc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*ebpf.Map{ma, mc} {
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 40, Pattern: true})
			produce(t, p, 1)
		}
		open, closed := bpftest.First(t, ra.Records()), bpftest.First(t, rc.Records())
		openView := open.RawSample
		openCopy := bytes.Clone(openView)
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		for _, rec := range []*Record{&open, &closed} {
			produce(t, pb, 1)
			if err := rb.ReadInto(rec); err != nil {
				t.Fatal(err)
			}
			if len(rec.RawSample) != 40 || rb.consumers[0].ring.isView(rec.RawSample) {
				t.Fatalf("ReadInto gave %d bytes at %p", len(rec.RawSample), rec.RawSample)
			}
		}
		if !bytes.Equal(openCopy, openView) {
			t.Fatal("the open reader's view changed")
		}
	})
}

// TestPositions: every reader reports the kernel's positions of its ring,
// as the kernel holds them: the producer's past what was produced, the
// consumer's past what was read, and then ErrClosed.
func TestPositions(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 3)
	check := func(what string, got RingPositions, err error, consumer, producer uint64) {
		t.Helper()
		want := RingPositions{Consumer: consumer, Producer: producer, Size: 4096}
		if err != nil || got != want || got.AvailableBytes() != int(producer-consumer) {
			t.Fatalf("%s: %+v (%d available), %v; want %+v", what, got, got.AvailableBytes(), err, want)
		}
		if kc, kp := kernelPositions(t, m); kc != consumer || kp != producer {
			t.Fatalf("%s: the kernel holds %d and %d", what, kc, kp)
		}
	}
	pos, err := r.Positions()
	check("3 records produced", pos, err, 0, 3*24)
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	pos, err = r.Positions()
	check("one read", pos, err, 24, 3*24)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Positions(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Positions of a closed Reader: %v, want ErrClosed", err)
	}

	rr, err := NewRawReader(m)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	pos, err = rr.Positions()
	check("a RawReader where the Reader left", pos, err, 24, 3*24)

	other := newRingMap(t, 8192)
	mr, err := NewMultiReader(other, m)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	if pos, err := mr.Positions(0); err != nil || pos != (RingPositions{Size: 8192}) {
		t.Fatalf("MultiReader ring 0: %+v, %v; want an empty ring of 8192 bytes", pos, err)
	}
	pos, err = mr.Positions(1)
	check("MultiReader ring 1", pos, err, 24, 3*24)
	if _, err := mr.Positions(2); err == nil {
		t.Fatal("MultiReader.Positions of a ring it does not read: no error")
	}
}

// TestReadIntoCallerMemoryRemappedAsRing: memory a caller lent ReadInto,
// then unmapped, may come back as another Reader's ring at the same
// address; a view there handed to the first Reader's ReadInto gets a copy
// in new memory, as any view does. A Reader maps the consumer page, then
// the data area a page below it.
func TestReadIntoCallerMemoryRemappedAsRing(t *testing.T) {
	bpftest.InChild(t, time.Minute, func(t *testing.T) {
		page := os.Getpagesize()
		ma, mb := newRingMap(t, 4096), newRingMap(t, 4096)
		pa := newProducer(t, progs.RingbufSpec{Ring: ma, Size: 40, Pattern: true})
		pb := newProducer(t, progs.RingbufSpec{Ring: mb, Size: 40, Pattern: true})
		ra := newTestReader(t, ma)
		produce(t, pa, 2)
		produce(t, pb, 1)
		readInto := func(dst []byte) []byte {
			rec := Record{RawSample: dst}
			if err := ra.ReadInto(&rec); err != nil {
				t.Fatal(err)
			}
			return rec.RawSample
		}
		open := func() []byte { return bpftest.First(t, newTestReader(t, mb).Records()).RawSample }
		bpftest.CheckCopyIntoRemappedMemory(t, 2*page+2*4096, page+headerSize, readInto, open)
	})
}
