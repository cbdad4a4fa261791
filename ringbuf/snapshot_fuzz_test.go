//go:build linux

package ringbuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"unsafe"
)

// snapRecord is a record the fake producer wrote, until it overwrote it.
type snapRecord struct {
	pos   uint64
	n     int // payload bytes
	id    int // its payload's pattern
	state int // recordBusy, recordSubmitted or recordDiscarded
}

func (rec *snapRecord) end() uint64 { return rec.pos + recordTotal(rec.n) }

// before reports whether position a comes before b, as the reader
// compares positions: by their distance, so that a wrap does not fool it.
func before(a, b uint64) bool { return int64(a-b) < 0 }

// snapshotFuzz is one run of FuzzSnapshot: an overwrite-mode ring in
// memory, its producer played by the fuzzer, the SnapshotReader on it,
// and the model of what both did.
type snapshotFuzz struct {
	t       *testing.T
	f       *overwriteFake
	r       *SnapshotReader
	records []*snapRecord // those the producer has not overwritten, in ring order
	nextID  int
	// corrupt is set once the input wrote a position or a header the
	// kernel would never write: from then on the run only checks that
	// the reader neither panics nor fails with anything but ErrCorrupt.
	corrupt bool
	// What the reader must have done: the position up to which it handed
	// records out or lost them, and its stats, as the docs define them.
	next     uint64
	stats    SnapshotStats
	yielded  uint64 // samples the current reader yielded, which Stats.Records must count
	snapshot int    // snapshots taken, for messages
}

// FuzzSnapshot runs a SnapshotReader over a fake overwrite-mode ring whose
// producer the input plays: records of any size, committed, discarded or
// left busy, lapping the ring; snapshots taken whole, broken off, or
// closed from the body with a new reader taking over; the producer
// overwriting records between a snapshot's copy and its re-check
// (snapshotCopied). Every snapshot must hand out exactly the records the
// ring holds that no snapshot handed out before, none torn, each once,
// oldest first, with stats and the published consumer position as the
// docs say. Then the input may corrupt a position (misaligned, more than
// a ring apart, anywhere), a header, or the overwrite position during a
// copy: the reader must report ErrCorrupt where the positions contradict
// the layout, and never panic or fail otherwise.
func FuzzSnapshot(f *testing.F) {
	f.Add(uint64(0), []byte{0, 0, 56, 9, 4})
	f.Add(uint64(1<<40), []byte{0, 0, 56, 200, 4, 0, 0, 100, 3, 4})
	// A busy record, a discarded one, a break, then the commit.
	f.Add(uint64(64), []byte{0, 0, 16, 3, 2, 0, 24, 1, 0, 8, 0, 0, 16, 2, 5, 1, 3, 0, 4})
	// Closed from the body after 2 of 5, and a new reader.
	f.Add(uint64(0), []byte{0, 0, 40, 4, 6, 1, 4})
	// Overwritten during the copy: inside it, then past it.
	f.Add(uint64(0), []byte{0, 0, 56, 19, 7, 0, 56, 49, 4})
	f.Add(uint64(0), []byte{0, 0, 56, 19, 7, 0, 56, 99, 4})
	// Positions set wrong: misaligned, then a producer position two rings on.
	f.Add(uint64(0), []byte{0, 0, 56, 9, 10, 1, 0, 3, 4})
	f.Add(uint64(0), []byte{0, 0, 56, 9, 10, 1, 2, 32, 4})
	// The last record's header claiming more than was produced (the nine
	// before it are handed out, then ErrCorrupt); the overwrite position
	// moved to the middle of a record during the copy.
	f.Add(uint64(0), []byte{0, 0, 56, 9, 11, 8, 0xff, 0x0f, 0, 0, 4})
	f.Add(uint64(0), []byte{0, 0, 56, 30, 12, 16, 4})
	// The overwrite position misaligned during the copy, then the reader
	// closed: its handed-out position must not take the misalignment.
	f.Add(uint64(0), []byte{0, 0, 56, 30, 12, 1, 8, 4})

	const size = 4096
	fake := newOverwriteFake(f, size)
	f.Fuzz(func(t *testing.T, start uint64, input []byte) {
		start &^= recordAlign - 1
		clear(fake.data[:size])
		fake.words[0], fake.words[1], fake.words[2], fake.words[3] = start, start, start, start
		z := &snapshotFuzz{t: t, f: fake, next: start}
		z.r = z.newReader()
		defer func() { z.r.Close() }()
		s := script(input) // writer_fuzz_test.go
		for len(s) > 0 {
			z.step(&s)
		}
		z.take(snapshotWhole, 0, nil)
		z.close()
	})
}

func (z *snapshotFuzz) newReader() *SnapshotReader {
	z.t.Helper()
	rg, err := newRing(&z.f.words[0], &z.f.words[1], unsafe.Pointer(&z.f.data[0]), z.f.size)
	if err != nil {
		z.t.Fatal(err)
	}
	r, err := newSnapshotReader(&mapping{}, rg)
	consumer := z.f.words[0]
	if consumer%recordAlign != 0 {
		if !errors.Is(err, ErrCorrupt) {
			z.t.Fatalf("a reader starting at consumer position %d: %v, want ErrCorrupt", consumer, err)
		}
		z.f.words[0] &^= recordAlign - 1 // to go on
		return z.newReader()
	}
	if err != nil {
		z.t.Fatal(err)
	}
	z.next, z.stats, z.yielded = consumer, SnapshotStats{}, 0
	return r
}

// How a snapshot's loop ends.
const (
	snapshotWhole = iota // at the end of the copy
	snapshotBreak        // by a break after a number of records
	snapshotClose        // by Close from the body after a number of records
)

func (z *snapshotFuzz) step(s *script) {
	switch op := s.next(); op % 13 {
	case 0: // a run of committed records of one size
		n, records := s.size(int(z.f.size-2*recordAlign)), 1+int(s.next()%128)
		for range records {
			z.write(n, recordSubmitted)
		}
	case 1:
		z.write(s.size(int(z.f.size-2*recordAlign)), recordDiscarded)
	case 2:
		z.write(s.size(int(z.f.size-2*recordAlign)), recordBusy)
	case 3: // the oldest busy record committed, or discarded
		z.commitBusy(s.next()%2 == 1)
	case 4:
		z.take(snapshotWhole, 0, nil)
	case 5:
		z.take(snapshotBreak, 1+int(s.next()), nil)
	case 6:
		z.take(snapshotClose, 1+int(s.next()), nil)
	case 7: // records written during the copy
		n, records := s.size(int(z.f.size-2*recordAlign)), 1+int(s.next())
		z.take(snapshotWhole, 0, func() {
			for range records {
				z.write(n, recordSubmitted)
			}
		})
	case 8: // a new reader, after the current one's snapshots
		z.close()
		z.r = z.newReader()
	case 9: // the consumer position set to a record's start, for the next reader
		if len(z.records) > 0 {
			z.f.words[0] = z.records[int(s.next())%len(z.records)].pos
		}
	case 10:
		z.setPosition(s.next(), s.next(), s)
	case 11: // a header overwritten with anything
		at := z.f.words[1] - uint64(s.next())*recordAlign
		hdr := binary.LittleEndian.Uint32([]byte{s.next(), s.next(), s.next(), s.next()})
		z.corrupt = true
		z.f.writeHeader(at, hdr)
	case 12: // the overwrite position moved anywhere during the copy
		delta := int64(int8(s.next()))
		z.take(snapshotWhole, 0, func() {
			z.corrupt = true
			atomic.AddUint64(&z.f.words[3], uint64(delta))
		})
	}
}

// close closes the reader, which then refuses every snapshot.
func (z *snapshotFuzz) close() {
	z.t.Helper()
	if err := z.r.Close(); err != nil {
		z.t.Fatal(err)
	}
	z.checkClosed()
}

// checkClosed checks that the reader, closed, refuses a snapshot.
func (z *snapshotFuzz) checkClosed() {
	z.t.Helper()
	var errs []error
	for sample, err := range z.r.Snapshot() {
		if sample != nil {
			z.t.Fatalf("snapshot %d: a closed reader handed out a record", z.snapshot)
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrClosed) {
		z.t.Fatalf("snapshot %d: a closed reader yielded %v, want ErrClosed alone", z.snapshot, errs)
	}
}

// setPosition sets the consumer, producer or overwrite position (which),
// moved by a number of bytes (how: 0 a few, misaligned; 1 a few records;
// 2 whole rings; 3 anywhere, from the script's next 8 bytes).
func (z *snapshotFuzz) setPosition(which, how byte, s *script) {
	word := &z.f.words[[]int{0, 1, 3}[which%3]]
	by := s.next()
	switch how % 4 {
	case 0:
		*word += uint64(int8(by))
	case 1:
		*word += uint64(int8(by)) * recordAlign
	case 2:
		*word += uint64(int8(by)) * z.f.size
	case 3:
		var b [8]byte
		b[0] = by
		for i := 1; i < 8; i++ {
			b[i] = s.next()
		}
		*word = binary.LittleEndian.Uint64(b[:])
	}
	z.corrupt = true
}

// write has the producer reserve a record of n bytes and leave it in
// state, as __bpf_ringbuf_reserve does in overwrite mode: the overwrite
// position moved past the oldest records until the new one fits in
// size-1 bytes, refused if that would take a busy record's space; then
// the busy header, the producer position, the payload, the commit.
func (z *snapshotFuzz) write(n, state int) {
	if z.corrupt || n < 0 || recordTotal(n) > z.f.size-recordAlign {
		return // the kernel refuses a record that cannot fit in size-1 bytes
	}
	pos := z.f.producerPos()
	end := pos + recordTotal(n)
	for _, rec := range z.records {
		if rec.state == recordBusy && end-rec.pos > z.f.size-1 {
			return // the kernel never overwrites a busy record: no room
		}
	}
	over, kept := z.f.overwritePos(), z.records
	for end-over > z.f.size-1 {
		over, kept = kept[0].end(), kept[1:]
	}
	z.records = kept
	atomic.StoreUint64(&z.f.words[3], over)
	z.f.writeHeader(pos, uint32(n)|busyBit)
	atomic.StoreUint64(&z.f.words[1], end)
	z.nextID++
	rec := &snapRecord{pos: pos, n: n, id: z.nextID, state: recordBusy}
	recordPattern(z.f.data[pos&(z.f.size-1)+headerSize:][:n], rec.id)
	z.records = append(z.records, rec)
	if state != recordBusy {
		z.commit(rec, state == recordDiscarded)
	}
}

func (z *snapshotFuzz) commit(rec *snapRecord, discard bool) {
	rec.state = recordSubmitted
	if discard {
		rec.state = recordDiscarded
	}
	z.f.commit(rec.pos, rec.n, discard)
}

func (z *snapshotFuzz) commitBusy(discard bool) {
	for _, rec := range z.records {
		if rec.state == recordBusy && !z.corrupt {
			z.commit(rec, discard)
			return
		}
	}
}

// copyFrom returns the records a copy taken now from pos holds: those up
// to the first busy one or the producer position, discarded ones
// included; and the position where it ends.
func (z *snapshotFuzz) copyFrom(pos uint64) (copied []*snapRecord, end uint64) {
	z.t.Helper()
	producer := z.f.producerPos()
	i := 0
	for i < len(z.records) && before(z.records[i].pos, pos) {
		i++
	}
	if pos != producer && (i == len(z.records) || z.records[i].pos != pos) {
		z.t.Fatalf("the model has no record at %d (producer %d): %v", pos, producer, z.records)
	}
	end = pos
	for _, rec := range z.records[i:] {
		if rec.state == recordBusy {
			break
		}
		copied, end = append(copied, rec), rec.end()
	}
	return copied, end
}

// take takes a snapshot that ends as mode says, after k records for a
// break or a Close, with during run between its copy and its re-check,
// and checks it against the model.
func (z *snapshotFuzz) take(mode, k int, during func()) {
	z.t.Helper()
	z.snapshot++
	consumer, corruptBefore := z.f.words[0], z.corrupt
	producer, overwrite := z.f.producerPos(), z.f.overwritePos()
	var start, end uint64
	var copied []*snapRecord
	if !z.corrupt {
		if int64(overwrite-z.next) > 0 {
			z.stats.LostBytes += overwrite - z.next
			z.next = overwrite
		}
		start = z.next
		copied, end = z.copyFrom(start)
	}
	copies := 0
	snapshotCopied = func() {
		if copies++; copies == 1 && during != nil {
			during()
		}
	}
	defer func() { snapshotCopied = nil }()

	var samples [][]byte
	var errs []error
	closed := false
	for sample, err := range z.r.Snapshot() {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(errs) > 0 || cap(sample) != len(sample) || len(sample) > int(z.f.size) {
			z.t.Fatalf("snapshot %d: a sample of %d bytes (capacity %d) after errors %v", z.snapshot, len(sample), cap(sample), errs)
		}
		samples = append(samples, bytes.Clone(sample))
		if len(samples) == k && mode == snapshotBreak {
			break
		}
		if len(samples) == k && mode == snapshotClose {
			if err := z.r.Close(); err != nil {
				z.t.Fatal(err)
			}
			closed = true
		}
	}
	z.yielded += uint64(len(samples))
	switch {
	case closed:
		z.checkClosed()
	case mode == snapshotClose:
		z.close()
	}
	if z.corrupt {
		z.checkCorrupt(corruptBefore && during == nil, producer, overwrite, samples, errs, closed)
	} else {
		z.check(mode, k, start, end, copied, during != nil, consumer, samples, errs)
	}
	if mode == snapshotClose {
		z.r = z.newReader()
	}
}

// check compares a snapshot of a ring the input did not corrupt with the
// model: copied is what the copy from start to end held; when the
// producer ran during the copy, the records it overwrote are dropped, or
// the copy taken again past them.
func (z *snapshotFuzz) check(mode, k int, start, end uint64, copied []*snapRecord, producerRan bool, consumer uint64, samples [][]byte, errs []error) {
	z.t.Helper()
	if overwritten := z.f.overwritePos(); producerRan && int64(overwritten-start) > 0 {
		for _, rec := range copied {
			if before(rec.pos, overwritten) && rec.state != recordDiscarded {
				z.stats.Torn++
			}
		}
		z.stats.LostBytes += overwritten - start
		z.next = overwritten
		if int64(overwritten-end) <= 0 {
			for len(copied) > 0 && before(copied[0].pos, overwritten) {
				copied = copied[1:]
			}
		} else {
			copied, end = z.copyFrom(overwritten) // the copy is taken again
		}
	}
	// The loop hands out the records copied, skips the discarded ones,
	// and moves the handed-out position past each.
	var want []*snapRecord
	handed, left := z.next, false
	for _, rec := range copied {
		if len(want) == k && mode != snapshotWhole {
			left = true // the loop ended before it
			break
		}
		if rec.state == recordSubmitted {
			want = append(want, rec)
		}
		handed = rec.end()
	}
	if !left {
		handed = end
	}
	wantErr := mode == snapshotClose && left && len(want) == k
	if len(errs) > 1 || (len(errs) == 1) != wantErr || (wantErr && !errors.Is(errs[0], ErrClosed)) {
		z.t.Fatalf("snapshot %d (mode %d, %d records): errors %v, want ErrClosed %v", z.snapshot, mode, k, errs, wantErr)
	}
	if len(samples) != len(want) {
		z.t.Fatalf("snapshot %d from %d: %d records handed out, want %d: %v", z.snapshot, start, len(samples), len(want), want)
	}
	for i, rec := range want {
		pattern := make([]byte, rec.n)
		recordPattern(pattern, rec.id)
		if !bytes.Equal(samples[i], pattern) {
			z.t.Fatalf("snapshot %d: record %d handed out as % x, want record %d at %d, % x",
				z.snapshot, i, samples[i], rec.id, rec.pos, pattern)
		}
	}
	z.next = handed
	z.stats.Records += uint64(len(want))
	if st := z.r.Stats(); st != z.stats {
		z.t.Fatalf("snapshot %d: stats %+v, want %+v", z.snapshot, st, z.stats)
	}
	if int64(handed-consumer) > 0 {
		consumer = handed
	}
	if got := z.f.words[0]; got != consumer {
		z.t.Fatalf("snapshot %d: consumer position %d, want %d", z.snapshot, got, consumer)
	}
}

// checkCorrupt checks a snapshot of a ring the input corrupted: an error
// is ErrCorrupt (or ErrClosed after Close), and comes last; positions that
// contradict the layout before the snapshot (known, unless the overwrite
// position moved during it) give ErrCorrupt alone; Stats counts what was
// handed out.
func (z *snapshotFuzz) checkCorrupt(known bool, producer, overwrite uint64, samples [][]byte, errs []error, closed bool) {
	z.t.Helper()
	for _, err := range errs {
		if !errors.Is(err, ErrCorrupt) && !(closed && errors.Is(err, ErrClosed)) {
			z.t.Fatalf("snapshot %d of a corrupt ring: %v, want ErrCorrupt", z.snapshot, err)
		}
	}
	if len(errs) > 1 {
		z.t.Fatalf("snapshot %d of a corrupt ring: errors %v, one at most", z.snapshot, errs)
	}
	bad := producer%recordAlign != 0 || overwrite%recordAlign != 0 || int64(producer-overwrite) > int64(z.f.size)
	if known && bad && (len(samples) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrCorrupt)) {
		z.t.Fatalf("snapshot %d: producer position %d, overwrite position %d: %d records, errors %v; want ErrCorrupt alone",
			z.snapshot, producer, overwrite, len(samples), errs)
	}
	if st := z.r.Stats(); st.Records != z.yielded {
		z.t.Fatalf("snapshot %d: stats %+v, %d records handed out", z.snapshot, st, z.yielded)
	}
}

func (rec *snapRecord) String() string {
	return fmt.Sprintf("{%d at %d, %d bytes, state %d}", rec.id, rec.pos, rec.n, rec.state)
}
