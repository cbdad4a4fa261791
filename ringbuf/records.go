package ringbuf

import "iter"

// Records returns an iterator over the ring's records, consumed in place:
//
//	for rec, err := range rd.Records() {
//		if err != nil {
//			return err // ErrClosed, ErrFlushed, os.ErrDeadlineExceeded, ...
//		}
//		handle(rec.RawSample)
//	}
//
// rec.RawSample aliases the ring and is valid until the loop body returns;
// copy what must outlive it. A record is consumed when the body returns,
// also on break and when the body panics. The loop blocks while the ring
// is empty and ends with one last pair carrying the error that stopped it:
// os.ErrDeadlineExceeded at the deadline, ErrFlushed after Flush once every
// record in the ring has been yielded, ErrClosed after Close.
//
// While the loop runs, the kernel learns what it consumed in batches of at
// most min(size/8, 256 KiB); before the loop waits, yields an error or
// ends for any reason, the kernel knows all of it. After Close, a loop
// yields the rest of the batch it holds, then ErrClosed: a batch given
// back half read would leave a gap below what other loops consumed, and
// the kernel's one consumer position cannot skip a gap.
//
// Several goroutines may range over the same Reader at once; each record is
// yielded to exactly one of them. A loop claims a batch of records at a
// time and hands the rest back if it stops early, waking a loop or read
// that waits for them.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	if r.copyOnly != nil {
		return copyOnlySeq[*Record]
	}
	return r.records
}

// records is the loop of Reader.Records and MultiReader.Records: the
// loop of Batches, with a Record for each sample.
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

// batchLoop is a loop's Batch as the engine's loop sees it
// (readers.Batcher).
type batchLoop struct {
	e *engine
	Batch
}

// Finish ends the loop's batch, if it holds one. One that read nothing
// before a busy record waits for its producer instead of claiming it
// again at once.
func (l *batchLoop) Finish() (stalled bool) {
	if !l.holding {
		return false
	}
	return l.e.finishLocked(&l.Batch) && l.pos == l.claim.Start
}

// Claim claims the loop's next batch.
func (l *batchLoop) Claim() (ok, busy bool, err error) {
	return l.e.claimBatchLocked(&l.Batch)
}

// claimBatchLocked claims a batch from the first ring that has records,
// starting where the last batch's ring left off, so that rings take turns:
// at most one batch of min(size/8, 256 KiB) (and the record crossing it)
// from each ring per turn.
func (e *engine) claimBatchLocked(b *Batch) (ok, busy bool, err error) {
	alone := e.core.Wait.Active() == 1
	for k := range e.consumers {
		i := (e.turn + k) % len(e.consumers)
		c := &e.consumers[i]
		if c.err != nil {
			return false, false, e.ringErr(i, c.err)
		}
		cl, ok, ringBusy := c.claimBatch(alone)
		if c.err != nil {
			return false, false, e.ringErr(i, c.err)
		}
		if !ok {
			busy = busy || ringBusy
			continue
		}
		e.turn = i + 1
		*b = Batch{
			ring:     c.ring,
			index:    i,
			claim:    cl,
			pos:      cl.Start,
			limit:    min(cl.End, cl.Start+c.batchBytes),
			producer: c.producerPos,
			holding:  true,
		}
		if e.keys != nil {
			b.key = e.keys[i]
		}
		e.core.ClaimedLocked()
		return true, false, nil
	}
	return false, busy, nil
}

// finishLocked ends a loop's batch: consumed up to b.pos, the rest given
// back, and the consumer position published, so the kernel never waits
// for more than a batch. It reports whether the walk stopped before a
// record a producer is still writing; one that stopped at a corrupt record
// leaves the ring's error.
func (e *engine) finishLocked(b *Batch) (busy bool) {
	c := &e.consumers[b.index]
	b.holding = false
	if b.pos < b.limit && !e.core.Released() {
		// The walk stopped early: a break, or a record it could not take.
		switch h := c.ring.headerAt(b.pos); {
		case h.busy():
			busy = true
		case h.total() > b.claim.End-b.pos && c.err == nil:
			c.err = c.ring.corrupt(b.pos, b.claim.End, h)
		}
	}
	gaveBack := c.claims.Release(b.claim, b.pos)
	if !e.core.Released() {
		c.publish()
	}
	e.core.ReleasedLocked(b.index, gaveBack)
	return busy
}
