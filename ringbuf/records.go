package ringbuf

import "iter"

// Records returns an iterator over the ring's records, consumed in place.
// rec.RawSample aliases the ring and is valid until the loop body returns;
// copy what must outlive it. A record is consumed when the body returns,
// also on break and panic. The loop blocks while the ring is empty and
// ends with one last pair carrying the error that stopped it:
// os.ErrDeadlineExceeded, ErrFlushed once the ring is empty, ErrClosed
// (after the rest of the batch the loop holds). Several goroutines may
// range over it at once, each record yielded to one of them; the package
// doc says when the kernel learns what a loop consumed.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	if r.copyOnly != nil {
		return copyOnlySeq[*Record]
	}
	return r.records
}

// records is the loop of Batches, with a Record for each sample.
func (e *engine) records(yield func(*Record, error) bool) {
	var rec Record
	for b, err := range e.batches {
		if err != nil {
			yield(nil, err)
			return
		}
		rec.Ring = b.key
		// No look-ahead load: with a call to the body in every pass, the core
		// cannot run ahead of its miss, and it only stalls (docs/batch-walk.md).
		for sample := range b.walk(false) {
			rec.RawSample = sample
			rec.Remaining = int(b.producer - b.pos)
			if !yield(&rec, nil) {
				return
			}
		}
	}
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
