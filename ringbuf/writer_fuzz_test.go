//go:build linux

package ringbuf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// fakeDrain plays the kernel's side of a user ring buffer in a fakeRing:
// bpf_user_ringbuf_drain, as __bpf_user_ringbuf_peek and
// __bpf_user_ringbuf_sample_release do it (kernel/bpf/ringbuf.c, Linux
// 6.1 to 7.x; writer.go quotes the rules).
type fakeDrain struct{ *fakeRing }

// drainEvent is what one step of a drain did at pos: took the record of
// sample, or skipped a discarded one (sample nil).
type drainEvent struct {
	pos    uint64
	sample []byte
}

// drain takes up to limit records, discarded ones counted as the kernel
// counts them, calling visit for each; a visit that returns false ends the
// drain after that record, as a callback returning 1 does. A record the
// kernel would refuse (-EINVAL, -E2BIG) is an error.
func (d fakeDrain) drain(limit int, visit func(drainEvent) bool) error {
	for range limit {
		producer := atomic.LoadUint64(&d.positions[1])
		if producer%8 != 0 {
			return errors.New("-EINVAL: producer position not 8-byte aligned")
		}
		consumer := atomic.LoadUint64(&d.positions[0])
		if consumer >= producer { // the kernel compares, it does not subtract
			return nil // -ENODATA
		}
		h := header(atomic.LoadUint32((*uint32)(unsafe.Pointer(&d.data[consumer&(d.size-1)]))))
		total := (uint64(h&lengthMask) + headerSize + 7) &^ 7
		switch {
		case total > producer-consumer:
			return errors.New("-EINVAL: record past the producer position")
		case total > d.size || h&lengthMask > maxDynptrSize:
			return errors.New("-E2BIG: record larger than the ring or a dynptr")
		case h.discarded(): // before busy: the kernel tests the discard bit first
			atomic.StoreUint64(&d.positions[0], consumer+total)
			visit(drainEvent{pos: consumer})
			continue
		case h.busy():
			return nil // -ENODATA: the rest waits for this one
		}
		more := visit(drainEvent{pos: consumer, sample: d.data[consumer&(d.size-1)+headerSize:][:h.length()]})
		atomic.StoreUint64(&d.positions[0], consumer+total)
		if !more {
			return nil
		}
	}
	return nil
}

// writerModelRecord is a record the fuzzer reserved, until the kernel
// consumed it.
type writerModelRecord struct {
	id    int // its number, which its payload's pattern derives from
	res   Reservation
	state int // busy, submitted or discarded
}

const (
	recordBusy = iota
	recordSubmitted
	recordDiscarded
)

// recordPattern fills b with record id's pattern, which no other record
// shares at more than a few bytes.
func recordPattern(b []byte, id int) {
	x := uint32(id)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
}

// writerFuzz is one run of FuzzWriter: the Writer, the fake kernel, and
// the model of what the ring holds, in ring order.
type writerFuzz struct {
	t       *testing.T
	w       *Writer
	kernel  fakeDrain
	model   []*writerModelRecord // reserved, not yet consumed, in ring order
	stale   []Reservation        // committed already
	nextID  int
	end     uint64 // the producer position the model expects
	closed  bool
	drained int // records the kernel took
	want    int // records submitted
}

// FuzzWriter drives a Writer on a fake user ring buffer with a script of
// Reserve, ReserveBatch, Submit, Discard, Write, stale commits, Close, and
// drains by a fake kernel that follows bpf_user_ringbuf_drain's rules:
// every submitted record is drained once, in ring order, with its bytes,
// a discarded one never; every reservation starts where the last one
// ended and fits beside the data the kernel has not consumed; a record
// too large fails with ErrRecordTooLarge, one the ring has no room for
// with os.ErrDeadlineExceeded (the deadline is past); the kernel never
// meets a header it refuses. The ring starts at the positions the input
// gives, below 2^62 (the kernel compares positions, which a wrap would
// fool), with one record of an earlier writer between them.
func FuzzWriter(f *testing.F) {
	f.Add(uint64(0), uint64(0), []byte{0, 0, 16, 2, 0, 5, 255})
	f.Add(uint64(4096-8), uint64(4096+64), []byte{1, 5, 0, 100, 3, 1, 2, 0, 6, 0, 5, 2, 4, 0, 200})
	f.Add(uint64(8), uint64(8), []byte{0, 5, 200, 0, 6, 3, 1, 4, 7, 0, 0, 1, 9, 0, 9, 7, 0, 7, 0, 0, 9, 5, 255})
	// A lap later, a stale Reservation's offset holds a busy record.
	f.Add(uint64(0), uint64(0), []byte{4, 0, 56, 63, 5, 127, 0, 0, 0, 56, 6, 1, 0, 2, 0, 0})
	f.Add(uint64(3), uint64(3), []byte{})
	f.Add(uint64(0), uint64(4096+8), []byte{})

	const size = 4096
	ring := newFakeRing(f, size)
	f.Fuzz(func(t *testing.T, consumer, producer uint64, script []byte) {
		consumer, producer = consumer%(1<<62), producer%(1<<62)
		clear(ring.data[:size])
		ring.positions[0], ring.positions[1] = consumer, producer
		z := &writerFuzz{t: t, kernel: fakeDrain{ring}, end: producer}
		if earlier := producer - consumer; int64(earlier) > 0 && earlier <= size && earlier%8 == 0 {
			z.earlierRecord(consumer, int(earlier-headerSize))
		}
		rg, err := newRing(&ring.positions[0], &ring.positions[1], unsafe.Pointer(&ring.data[0]), size)
		if err != nil {
			t.Fatal(err)
		}
		poller, err := epoll.New()
		if err != nil {
			t.Fatal(err)
		}
		z.w, err = newWriter(rg, &resources{mappings: []*mapping{{}}, poller: poller})
		bad := producer-consumer > size || producer%8 != 0 || consumer%8 != 0
		if bad || err != nil {
			poller.Close()
			if !bad || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("positions %d, %d: newWriter said %v", consumer, producer, err)
			}
			return
		}
		defer z.w.Close()
		z.w.SetDeadline(time.Unix(1, 0)) // a full ring fails at once
		z.run(script)
		z.finish()
	})
}

// earlierRecord writes a submitted record of n bytes at pos, as a Writer
// before this one left it.
func (z *writerFuzz) earlierRecord(pos uint64, n int) {
	ring := z.kernel.fakeRing
	ring.writeHeader(pos, uint32(n))
	sample := ring.data[pos&(ring.size-1)+headerSize:][:n]
	id := z.newID()
	recordPattern(sample, id)
	z.model = append(z.model, &writerModelRecord{id: id, res: Reservation{RawSample: sample, pos: pos}, state: recordSubmitted})
	z.want++
}

func (z *writerFuzz) newID() int {
	z.nextID++
	return z.nextID
}

// script reads the fuzzer's input a byte at a time, zeros once it ran out.
type script []byte

func (s *script) next() byte {
	if len(*s) == 0 {
		return 0
	}
	b := (*s)[0]
	*s = (*s)[1:]
	return b
}

// size picks a record length: mostly small, sometimes about the largest
// the Writer takes, past it, or negative.
func (s *script) size(maxLen int) int {
	kind, n := s.next(), int(s.next())
	switch kind % 8 {
	case 5:
		return maxLen - n
	case 6:
		return maxLen + 1 + n
	case 7:
		if n%2 == 0 {
			return -1 - n
		}
		return math.MaxInt - n
	}
	return n
}

func (z *writerFuzz) run(input []byte) {
	s := script(input)
	for len(s) > 0 {
		switch op := s.next(); op % 8 {
		case 0:
			z.reserve(s.size(z.w.maxLen))
		case 1:
			z.reserveBatch(int(s.next()%6), s.size(z.w.maxLen))
		case 2, 3:
			if busy := z.busy(); len(busy) > 0 {
				z.commit(busy[int(s.next())%len(busy)], op%8 == 3)
			}
		case 4: // a run of records of one size, so that a few ops lap the ring
			n, records := s.size(z.w.maxLen), 1+int(s.next()%64)
			for range records {
				z.write(n)
			}
		case 5:
			z.drain(1+int(s.next()%128), int(s.next()))
		case 6:
			z.staleCommit(s.next(), s.next())
		case 7:
			z.close()
		}
		z.checkAvailable()
	}
}

// busy returns the records reserved and not yet committed.
func (z *writerFuzz) busy() []*writerModelRecord {
	var busy []*writerModelRecord
	for _, rec := range z.model {
		if rec.state == recordBusy {
			busy = append(busy, rec)
		}
	}
	return busy
}

// wantReserve returns how many records of n bytes a reservation may take
// now, and the error it must fail with if none.
func (z *writerFuzz) wantReserve(n int) (fits uint64, want error) {
	switch {
	case n < 0 || n > z.w.maxLen:
		return 0, ErrRecordTooLarge
	case z.closed:
		return 0, ErrClosed
	}
	fits = (z.w.rg.size - (z.end - z.consumerPos())) / recordTotal(n)
	if fits == 0 {
		return 0, os.ErrDeadlineExceeded
	}
	return fits, nil
}

func (z *writerFuzz) consumerPos() uint64 { return atomic.LoadUint64(&z.kernel.positions[0]) }

// reserved checks that a reservation of n bytes the Writer made at pos
// starts where the last one ended and fits beside the data the kernel has
// not consumed, and adds it to the model with state.
func (z *writerFuzz) reserved(pos uint64, n, state int) *writerModelRecord {
	z.t.Helper()
	ring := z.kernel.fakeRing
	total := recordTotal(n)
	if pos != z.end {
		z.t.Fatalf("reservation of %d bytes at %d, want the end of the last one, %d", n, pos, z.end)
	}
	if z.end+total-z.consumerPos() > ring.size {
		z.t.Fatalf("reservation [%d, %d) over data the kernel has not consumed from %d", pos, pos+total, z.consumerPos())
	}
	z.end += total
	rec := &writerModelRecord{id: z.newID(), state: state}
	rec.res = Reservation{RawSample: ring.data[pos&(ring.size-1)+headerSize:][:n:n], pos: pos}
	z.model = append(z.model, rec)
	return rec
}

// filled checks r's RawSample, n bytes right after its header, then adds
// r to the model, filled with its pattern.
func (z *writerFuzz) filled(r Reservation, n int) {
	z.t.Helper()
	rec := z.reserved(r.pos, n, recordBusy)
	if len(r.RawSample) != n || cap(r.RawSample) != n || unsafe.SliceData(r.RawSample) != unsafe.SliceData(rec.res.RawSample) {
		z.t.Fatalf("reservation of %d bytes at %d: RawSample of %d bytes (capacity %d) at %p, not right after its header",
			n, r.pos, len(r.RawSample), cap(r.RawSample), unsafe.SliceData(r.RawSample))
	}
	rec.res = r
	recordPattern(r.RawSample, rec.id)
}

func (z *writerFuzz) reserve(n int) {
	z.t.Helper()
	_, want := z.wantReserve(n)
	r, err := z.w.Reserve(n)
	if !errors.Is(err, want) {
		z.t.Fatalf("Reserve(%d): %v, want %v", n, err, want)
	}
	if err == nil {
		z.filled(r, n)
	}
}

func (z *writerFuzz) reserveBatch(k, n int) {
	z.t.Helper()
	fits, want := z.wantReserve(n)
	if k == 0 && !errors.Is(want, ErrRecordTooLarge) {
		want, fits = nil, 0 // nothing asked, nothing to wait for
	}
	var rs [5]Reservation
	got, err := z.w.ReserveBatch(rs[:k], n)
	if !errors.Is(err, want) || uint64(got) != min(uint64(k), fits) {
		z.t.Fatalf("ReserveBatch(%d of %d bytes) with room for %d: %d, %v; want %d, %v",
			k, n, fits, got, err, min(uint64(k), fits), want)
	}
	for _, r := range rs[:got] {
		z.filled(r, n)
	}
}

func (z *writerFuzz) commit(rec *writerModelRecord, discard bool) {
	z.t.Helper()
	commit, state := z.w.Submit, recordSubmitted
	if discard {
		commit, state = z.w.Discard, recordDiscarded
	}
	err := commit(rec.res)
	if z.closed {
		if !errors.Is(err, ErrClosed) {
			z.t.Fatalf("commit after Close: %v, want ErrClosed", err)
		}
		return
	}
	if err != nil {
		z.t.Fatalf("commit of record %d at %d: %v", rec.id, rec.res.pos, err)
	}
	rec.state = state
	if state == recordSubmitted {
		z.want++
	}
	z.stale = append(z.stale, rec.res)
}

// write writes a record of n bytes with Write, if a slice can be that
// long.
func (z *writerFuzz) write(n int) {
	z.t.Helper()
	if n < 0 || n > 2*z.w.maxLen {
		return
	}
	_, want := z.wantReserve(n)
	p := make([]byte, n)
	recordPattern(p, z.nextID+1) // the id reserved gives it
	pos := z.end
	got, err := z.w.Write(p)
	if !errors.Is(err, want) || (err == nil && got != n) {
		z.t.Fatalf("Write of %d bytes: %d, %v; want %v", n, got, err, want)
	}
	if err == nil {
		z.stale = append(z.stale, z.reserved(pos, n, recordSubmitted).res)
		z.want++
	}
}

// staleCommit commits again a reservation committed before (the one at
// index, of those), or the zero Reservation: refused, and nothing in the
// ring changes (the drains check the bytes).
func (z *writerFuzz) staleCommit(kind, index byte) {
	z.t.Helper()
	var r Reservation
	if len(z.stale) > 0 && kind%4 != 0 {
		r = z.stale[int(index)%len(z.stale)]
	}
	commit := z.w.Submit
	if kind%2 == 0 {
		commit = z.w.Discard
	}
	err := commit(r)
	want := ErrNotReserved
	if z.closed && r.RawSample != nil {
		want = ErrClosed
	}
	if !errors.Is(err, want) {
		z.t.Fatalf("commit of a stale reservation at %d: %v, want %v", r.pos, err, want)
	}
}

// close closes the Writer, which discards the records still reserved.
func (z *writerFuzz) close() {
	z.t.Helper()
	if err := z.w.Close(); err != nil {
		z.t.Fatal(err)
	}
	if !z.closed {
		for _, rec := range z.busy() {
			rec.state = recordDiscarded
		}
	}
	z.closed = true
}

// drain runs the fake kernel for up to limit records, its callback ending
// it after stopAfter of them, and checks each against the model: the
// records in ring order, discarded ones skipped, each submitted one taken
// with its bytes, and the drain ending only at a busy record, at the end
// of the data, at the limit, or where the callback ended it.
func (z *writerFuzz) drain(limit, stopAfter int) {
	z.t.Helper()
	taken, steps := 0, 0
	err := z.kernel.drain(limit, func(ev drainEvent) bool {
		steps++
		if len(z.model) == 0 {
			z.t.Fatalf("the kernel found a record at %d, none was reserved there", ev.pos)
		}
		rec := z.model[0]
		z.model = z.model[1:]
		switch {
		case rec.res.pos != ev.pos:
			z.t.Fatalf("the kernel took a record at %d, the next one is at %d", ev.pos, rec.res.pos)
		case ev.sample == nil && rec.state != recordDiscarded:
			z.t.Fatalf("the kernel skipped record %d at %d as discarded; its state is %d", rec.id, ev.pos, rec.state)
		case ev.sample != nil && rec.state != recordSubmitted:
			z.t.Fatalf("the kernel took record %d at %d, not submitted (state %d)", rec.id, ev.pos, rec.state)
		}
		if ev.sample == nil {
			return true
		}
		want := make([]byte, len(rec.res.RawSample))
		recordPattern(want, rec.id)
		if !bytes.Equal(ev.sample, want) {
			z.t.Fatalf("record %d at %d drained with other bytes than written:\n got % x\nwant % x", rec.id, ev.pos, ev.sample, want)
		}
		z.drained++
		taken++
		return taken < stopAfter || stopAfter == 0
	})
	if err != nil {
		z.t.Fatalf("the kernel refused a record the Writer wrote: %v", err)
	}
	if steps < limit && (taken < stopAfter || stopAfter == 0) && len(z.model) > 0 && z.model[0].state != recordBusy {
		z.t.Fatalf("the drain stopped before record %d at %d (state %d), not busy", z.model[0].id, z.model[0].res.pos, z.model[0].state)
	}
}

// checkAvailable checks AvailableBytes against the model.
func (z *writerFuzz) checkAvailable() {
	z.t.Helper()
	want := int(z.w.rg.size - (z.end - z.consumerPos()))
	if z.closed {
		want = 0
	}
	if got := z.w.AvailableBytes(); got != want {
		z.t.Fatalf("AvailableBytes %d, want %d", got, want)
	}
}

// finish discards what is still reserved, drains the ring, and checks
// that the kernel took every record submitted.
func (z *writerFuzz) finish() {
	z.t.Helper()
	for _, rec := range z.busy() {
		z.commit(rec, true)
	}
	z.close()
	z.drain(math.MaxInt, 0)
	if len(z.model) != 0 || z.consumerPos() != z.end {
		z.t.Fatalf("after the last drain: %d records left, consumer position %d, want %d", len(z.model), z.consumerPos(), z.end)
	}
	if z.drained != z.want {
		z.t.Fatalf("the kernel took %d records, %d were submitted", z.drained, z.want)
	}
}
