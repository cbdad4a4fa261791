package ringbuf

import "iter"

// Batch is a run of records claimed by one loop of Batches: at most
// min(size/8, 256 KiB) of one ring, and the record that crosses that
// bound. It belongs to the body of the loop that yielded it: the loop
// reuses it for the next batch, and once the loop has ended, its Samples
// yield nothing.
type Batch struct {
	ring     *ring
	index    int // the ring's index in the engine
	key      int // Record.Ring of the ring
	claim    claim
	pos      uint64 // records below are consumed
	limit    uint64 // the walk ends at the first record boundary from here
	producer uint64 // producer position when claimed
	holding  bool
	ahead    header // what the look-ahead loads read
}

// Ring is where the batch's records come from: 0 from a Reader, the ring's
// index or key from a MultiReader, as Record.Ring.
func (b *Batch) Ring() int { return b.key }

// Samples returns an iterator over the samples of the batch, in ring
// order. Each sample aliases the ring, read-only, with its capacity equal
// to its length, and is valid until the body of the Batches loop returns.
// A sample is consumed once it is handed out, also if the body breaks or
// panics; samples the loop does not reach go back to the reader. It holds
// no lock, defers and calls nothing, so the compiler inlines it and the
// loop body into the caller.
func (b *Batch) Samples() iter.Seq[[]byte] {
	return b.walk(true)
}

// walk is the loop of Samples, with the look-ahead loads or without them
// (Records).
func (b *Batch) walk(lookAhead bool) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !b.holding {
			return // the loop ended: its records went back, its ring may be unmapped
		}
		area := b.ring.dataArea // in registers: the stores to b.pos cannot change it
		p, limit, end := b.pos, b.limit, b.claim.End
		var ahead header
		for p < limit {
			h := area.headerAt(p)
			total := h.total()
			if h.busy() || total > end-p {
				break // a producer is still writing it, or corrupt: the loop's end tells which
			}
			if lookAhead && total >= lookAheadMinStep {
				ahead |= area.headerAt(p + lookAheadRecords*total)
			}
			next := p + total
			if !h.discarded() {
				b.pos = next
				if !yield(area.sample(p, h.length())) {
					return
				}
			}
			p = next
		}
		b.pos, b.ahead = p, ahead
	}
}

// Look-ahead: a walk is a chain of dependent loads, one miss in flight at
// a time. For records of lookAheadMinStep bytes or more, Samples also
// loads the header lookAheadRecords records on, guessing they are as long
// as this one; the load is never trusted, only kept (Batch.ahead) so that
// it is not compiled away (docs/batch-walk.md).
const (
	lookAheadRecords = 2
	lookAheadMinStep = 256
)

// Batches returns an iterator over batches of the ring's records, with
// the guarantees of Records and the speed of a hand-written walk:
//
//	for batch, err := range rd.Batches() {
//		if err != nil {
//			return err // ErrClosed, ErrFlushed, os.ErrDeadlineExceeded, ...
//		}
//		for sample := range batch.Samples() {
//			handle(sample) // valid until the outer body returns
//		}
//	}
//
// Records calls the loop body once a record, which the compiler cannot
// inline; Batches costs a call per batch, and Samples inlines. Close ends
// the loop at the end of a batch.
func (r *Reader) Batches() iter.Seq2[*Batch, error] {
	if r.copyOnly != nil {
		return copyOnlySeq[*Batch]
	}
	return r.batches
}

// Batches is Reader.Batches over every ring: a batch comes from one ring,
// which Batch.Ring names.
func (mr *MultiReader) Batches() iter.Seq2[*Batch, error] {
	return mr.batches
}

func (e *engine) batches(yield func(*Batch, error) bool) {
	l := &batchLoop{e: e}
	e.core.Loop(l, func(err error) bool {
		if err != nil {
			return yield(nil, err)
		}
		return yield(&l.Batch, nil)
	})
}
