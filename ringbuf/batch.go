package ringbuf

import "iter"

// Batch is a run of records of one ring claimed by a loop of [Reader.Batches]: at
// most min(size/8, 256 KiB) and the record crossing it. It belongs to the
// loop's body; once the loop has ended, its [Batch.Samples] yield nothing.
type Batch struct {
	ring     *ring
	index    int // the ring's index in the engine
	key      int // Record.Ring of the ring
	claim    claim
	pos      uint64 // records below are consumed
	limit    uint64 // the walk ends at the first record boundary from here
	producer uint64 // producer position when claimed
	holding  bool
	lines    uint32 // what the stream loads read (loadLines), kept
}

// Ring is where the batch's records come from, as [Record.Ring].
func (b *Batch) Ring() int { return b.key }

// Samples returns an iterator over the batch's samples, read-only views
// of the ring valid until the Batches loop's body returns. A sample is
// consumed once handed out; those not reached go back to the reader. It
// takes no lock and calls nothing, so it inlines with its loop body.
func (b *Batch) Samples() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !b.holding {
			return // the loop ended: its records went back, its ring may be unmapped
		}
		area := b.ring.dataArea // in registers: the stores to b.pos cannot change it
		p, limit, end := b.pos, b.limit, b.claim.End
		var lines uint32
		for p < limit {
			h := area.headerAt(p)
			total := h.total()
			if h.busy() || total > end-p {
				break // a producer is still writing it, or corrupt: the loop's end tells which
			}
			lines |= area.loadLines(p, total, walkStreamMax)
			next := p + total
			if !h.discarded() {
				b.pos = next
				if !yield(area.sample(p, h.length())) {
					return
				}
			}
			p = next
		}
		b.pos, b.lines = p, lines
	}
}

// Batches returns an iterator over batches of the ring's records, with
// the guarantees of [Reader.Records] and the speed of a hand-written walk: Records
// calls the loop body once a record, Batches once a batch.
func (r *Reader) Batches() iter.Seq2[*Batch, error] {
	if r.copyOnly != nil {
		return copyOnlySeq[*Batch]
	}
	return r.batches
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

// batchLoop is a loop's Batch as readers.Engine.Loop sees it.
type batchLoop struct {
	e *engine
	Batch
}

// Claim claims a batch of ring i.
func (l *batchLoop) Claim(i int, alone bool) (ok, busy bool, err error) {
	e, c := l.e, &l.e.consumers[i]
	var cl claim
	if c.err == nil {
		cl, ok, busy = c.claimBatch(alone)
	}
	if c.err != nil || !ok {
		return false, busy, e.ringErr(i, c.err)
	}
	l.Batch = Batch{
		ring:     c.ring,
		index:    i,
		claim:    cl,
		pos:      cl.Start,
		limit:    min(cl.End, cl.Start+c.batchBytes),
		producer: c.producerPos,
		holding:  true,
	}
	if e.keys != nil {
		l.key = e.keys[i]
	}
	return true, false, nil
}

// Finish ends the loop's batch, if it holds one. A walk that stopped at
// a corrupt record leaves the ring's error; one that read nothing before a
// busy record is stalled.
func (l *batchLoop) Finish() (stalled bool) {
	if !l.holding {
		return false
	}
	e, b := l.e, &l.Batch
	c := &e.consumers[b.index]
	b.holding = false
	if b.pos < b.limit && !e.core.Freed() {
		switch h := c.ring.headerAt(b.pos); {
		case h.busy():
			stalled = b.pos == b.claim.Start
		case h.total() > b.claim.End-b.pos && c.err == nil:
			c.err = c.ring.corrupt(b.pos, b.claim.End, h)
		}
	}
	e.core.EndClaimLocked(b.index, &c.claims, b.claim, b.pos)
	return stalled
}
