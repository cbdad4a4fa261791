package perf

import (
	"iter"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// Batch is a run of one CPU's records claimed by a [Reader.Batches] loop:
// at most min(size/8, 256 KiB) and the record crossing it. It belongs to
// the loop's body; once the loop has ended, [Batch.Samples] yields nothing.
type Batch struct {
	c          *consumer
	index      int // c's in buffers.consumers
	claim      readers.Claim
	pos        uint64 // records below are consumed
	limit      uint64 // the walk ends at the first record boundary from here
	bias, head uint64 // c's, when claimed
	holding    bool
	err        error   // the walk stopped at a corrupt record
	scratch    *[]byte // the copy of a sample that wraps: the loop's, or ReadInto's
	lost       uint64  // what LostSamples returns
	unknown    error   // the unknown record Samples stopped after, for the loop to yield
}

// CPU returns the CPU whose buffer holds the batch's records.
func (b *Batch) CPU() int { return b.c.cpu }

// LostSamples returns the samples the kernel reported lost in the records
// [Batch.Samples] walked past since the loop yielded b: read it after them.
func (b *Batch) LostSamples() uint64 { return b.lost }

// Samples returns an iterator over the batch's samples: read-only views of
// the CPU's buffer valid until the loop's body returns (copied into the
// loop's memory if one wraps around the buffer's end), each consumed once
// handed out; those not reached go back to the reader. Lost samples are
// counted, not yielded; a record of an unknown type ends the samples, and
// the loop yields its error ([IsUnknownEvent]), then the rest as a batch.
// Samples takes no lock and inlines into the loop's body.
func (b *Batch) Samples() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !b.holding || b.unknown != nil {
			return // the loop ended (the buffer may be unmapped), or owes the error
		}
		buf := b.c.buf
		p, limit, end, bias := b.pos, b.limit, b.claim.End, b.bias
		for p < limit {
			h := buf.headerAt(p - bias)
			size := uint64(h.size)
			if size < sampleHeaderSize || size%recordAlign != 0 || size > end-p || h.typ != recordSample {
				// Rare: lost samples, an unknown type, a bad or cut record.
				if !b.skip(p) {
					return
				}
				p = b.pos
				continue
			}
			length := buf.u32At(p - bias + headerSize)
			if uint64(length) > size-sampleHeaderSize {
				b.corruptAt(p)
				return
			}
			next := p + size
			b.pos = next // consumed once handed out, whatever the body does
			if !yield(buf.view(p-bias+sampleHeaderSize, length, b.scratch)) {
				return
			}
			p = next
		}
		b.pos = p
	}
}

// skip walks Samples past the record at p, counting lost samples; false
// stops the walk.
func (b *Batch) skip(p uint64) (ok bool) {
	got, ok := b.other(p)
	switch {
	case !ok:
		return false
	case got.typ != recordLost:
		b.unknown = &unknownEventError{got.typ}
		return false
	}
	b.lost += got.lost
	return true
}

// batches hands the body each batch, and again what follows a record of
// an unknown type after its error.
func (bs *buffers) batches(yield func(*Batch, error) bool) {
	l := &batchLoop{buffers: bs}
	bs.engine.Loop(l, func(err error) bool {
		if err != nil {
			return yield(nil, err)
		}
		for {
			l.lost = 0
			if !yield(&l.Batch, nil) {
				return false
			}
			unknown := l.unknown
			if unknown == nil {
				return true
			}
			l.unknown = nil
			if !yield(nil, unknown) {
				return false
			}
			if l.pos >= l.limit {
				return true
			}
		}
	})
}

// claimBatch claims a batch of buffer i: a returned claim whole, else
// what is produced, up to batchBytes unless alone; a sample that wraps
// is copied into scratch.
func (bs *buffers) claimBatch(i int, alone bool, scratch *[]byte) (Batch, bool, error) {
	c := &bs.consumers[i]
	if c.overwrite {
		if !bs.paused.Load() {
			return Batch{}, false, ErrMustBePaused
		}
		c.loadWindow()
	}
	var cl readers.Claim
	switch r, returned := c.claims.Returned(); {
	case c.err != nil:
		return Batch{}, false, c.err
	case returned:
		cl = c.claims.Take(r.Start, r.End, true)
	case !c.produced():
		return Batch{}, false, c.err
	case alone:
		cl = c.claims.Hold(c.head)
	default:
		cl = c.claims.Hold(c.scan(c.claims.Pos(), c.head))
	}
	return Batch{
		c:       c,
		index:   i,
		claim:   cl,
		pos:     cl.Start,
		limit:   min(cl.End, cl.Start+c.batchBytes),
		bias:    c.bias,
		head:    c.head,
		holding: true,
		scratch: scratch,
	}, true, nil
}

// release gives back what the walk did not reach; a corrupt record sticks.
func (b *Batch) release() {
	c := b.c
	b.holding = false
	if b.err != nil && c.err == nil {
		c.err = b.err
	}
	c.claims.Release(b.claim, b.pos)
}

// walkRecords is Samples for Records and ReadInto, yielding lost samples
// and unknown types in place; false if the body asked for no more.
func (b *Batch) walkRecords(rec *Record, yield func(*Record, error) bool) bool {
	buf := b.c.buf
	rec.CPU = b.c.cpu
	p, limit, end, bias := b.pos, b.limit, b.claim.End, b.bias
	for p < limit {
		h := buf.headerAt(p - bias)
		size := uint64(h.size)
		if size < sampleHeaderSize || size%recordAlign != 0 || size > end-p || h.typ != recordSample {
			// Rare: lost samples, an unknown type, a bad or cut record.
			got, ok := b.other(p)
			if !ok {
				return true
			}
			var more bool
			if got.typ != recordLost {
				more = yield(nil, &unknownEventError{got.typ})
			} else {
				rec.RawSample, rec.LostSamples, rec.Remaining = nil, got.lost, b.remaining(b.pos)
				more = yield(rec, nil)
			}
			if !more {
				return false
			}
			p = b.pos
			continue
		}
		length := buf.u32At(p - bias + headerSize)
		if uint64(length) > size-sampleHeaderSize {
			b.corruptAt(p)
			return true
		}
		next := p + size
		rec.RawSample = buf.view(p-bias+sampleHeaderSize, length, b.scratch)
		rec.LostSamples = 0
		rec.Remaining = b.remaining(next)
		b.pos = next // consumed once handed out, whatever the body does
		if !yield(rec, nil) {
			return false
		}
		p = next
	}
	b.pos = p
	return true
}

// other consumes the record at p, not a well-formed sample; false stops
// the walk: an overwritable window's end, or a corrupt record.
func (b *Batch) other(p uint64) (got record, ok bool) {
	got, err := b.c.buf.parse(p-b.bias, b.claim.End-p)
	switch {
	case err != nil && b.c.overwrite:
		b.pos = b.claim.End // cut short by the wrap (abi.go): the window ends
		return got, false
	case err != nil:
		b.pos, b.err = p, b.c.cpuErr(err)
		return got, false
	}
	b.pos = p + got.size
	return got, true
}

// corruptAt stops the walk at the sample at p, whose size does not fit.
func (b *Batch) corruptAt(p uint64) {
	_, err := b.c.buf.parse(p-b.bias, b.claim.End-p)
	b.pos, b.err = p, b.c.cpuErr(err)
}

func (b *Batch) remaining(end uint64) int {
	if b.c.overwrite {
		return -1
	}
	return int(b.head - end)
}

// batchLoop is a loop's readers.Holder.
type batchLoop struct {
	buffers *buffers
	Batch
	wrapped []byte // the copy of a sample that wraps
}

func (l *batchLoop) Claim(i int, alone bool) (readers.Take, error) {
	b, ok, err := l.buffers.claimBatch(i, alone, &l.wrapped)
	if !ok {
		return readers.None, err
	}
	l.Batch = b
	return readers.Held, nil
}

func (l *batchLoop) Release(bool) (i, ended int, stalled bool) {
	if !l.holding {
		return 0, 0, false
	}
	l.release()
	return l.index, 1, false
}

// readInto is ReadInto's memory, under the engine's lock.
type readInto struct {
	rec     Record
	scratch []byte
	copies  readers.CopyCache
}

// one copies the next record of CPU i's buffer into rec, or reports its
// unknown type; it claims all there is, since nobody sees the claim.
func (ri *readInto) one(bs *buffers, i int, rec *Record, unknown *error) (readers.Take, error) {
	b, ok, err := bs.claimBatch(i, true, &ri.scratch)
	if !ok {
		return readers.None, err
	}
	read := false
	b.walkRecords(&ri.rec, func(got *Record, err error) bool {
		read, *unknown = true, err
		if err == nil {
			rec.Remaining, rec.LostSamples = got.Remaining, got.LostSamples
			rec.RawSample = ri.copies.Destination(rec.RawSample, len(got.RawSample))
			copy(rec.RawSample, got.RawSample)
		}
		rec.CPU = b.c.cpu
		return false
	})
	b.release()
	if read {
		b.c.publish()
		if b.c.claims.Pos() == b.c.head { // caught up with the head it loaded
			return readers.CopiedLast, nil
		}
		return readers.Copied, nil
	}
	return readers.None, b.c.err
}
