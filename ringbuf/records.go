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
// ends for any reason, the kernel knows all of it.
//
// Several goroutines may range over the same Reader at once; each record is
// yielded to exactly one of them. A loop claims a batch of records at a
// time and hands the rest back if it stops early, waking a loop or read
// that waits for them.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	return r.records
}

// records is the loop of Reader.Records and MultiReader.Records.
func (e *engine) records(yield func(*Record, error) bool) {
	var (
		rec Record
		b   batch
		op  waitState
	)
	e.mu.Lock()
	err := e.wait.Begin()
	e.mu.Unlock()
	if err != nil {
		yield(nil, err)
		return
	}
	// mu is never held while the body runs, so this runs the same way on
	// break, on return and when the body panics.
	defer e.endLoop(&b)
	for {
		if err := e.nextBatch(&b, &op); err != nil {
			yield(nil, err)
			return
		}
		if e.keys != nil {
			rec.Ring = e.keys[b.ring]
		}
		if !e.yieldBatch(&b, &rec, yield) {
			return
		}
	}
}

// batch is a loop's claim on one ring, read outside mu.
type batch struct {
	ring     int // index in engine.rings
	claim    claim
	pos      uint64 // records below are consumed
	limit    uint64 // the walk ends at the first record boundary from here
	producer uint64 // producer position when claimed
	holding  bool
	busy     bool  // the walk stopped before a busy record
	err      error // the walk stopped at a corrupt record
}

// yieldBatch yields b's records from b.pos on, and reports whether the
// loop body asked for more. It stops at b.limit, before a busy record, at
// a corrupt one (in b.busy, b.err) and once the engine is closed.
//
// The hot loop: one header load per record; nothing is called but yield
// and methods that inline. The checks keep every read inside the claim
// even if the ring changes under us.
func (e *engine) yieldBatch(b *batch, rec *Record, yield func(*Record, error) bool) bool {
	rg, closed := e.rings[b.ring].ring, &e.closed
	p, limit, end := b.pos, b.limit, b.claim.End
	for p < limit && !closed.Load() {
		h := rg.headerAt(p)
		if h.busy() {
			b.busy = true // claimed without a walk: a producer is still writing
			break
		}
		total := h.total()
		if total > end-p {
			b.err = rg.corrupt(p, end, h)
			break
		}
		next := p + total
		if !h.discarded() {
			rec.RawSample = rg.sample(p, h.length())
			rec.Remaining = int(b.producer - next)
			b.pos = next // consumed once handed out, whatever the body does
			if !yield(rec, nil) {
				return false
			}
		}
		p = next
	}
	b.pos = p
	return true
}

// nextBatch ends the loop's batch, if it holds one, and claims the next,
// waiting for records as a read does.
func (e *engine) nextBatch(b *batch, op *waitState) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	stalled := false
	if b.holding {
		// Nothing before a busy record: wait for its producer instead of
		// claiming it again at once.
		stalled = b.busy && b.pos == b.claim.Start && b.err == nil
		e.finishLocked(b)
	}
	for {
		if e.closed.Load() {
			return ErrClosed
		}
		if !stalled {
			ok, busy, err := e.claimBatchLocked(b)
			if ok || err != nil {
				return err
			}
			stalled = busy
		}
		if err := e.waitLocked(op, stalled); err != nil {
			return err
		}
		stalled = false
	}
}

// claimBatchLocked claims a batch from the first ring that has records,
// starting where the last batch's ring left off, so that rings take turns:
// at most one batch of min(size/8, 256 KiB) (and the record crossing it)
// from each ring per turn.
func (e *engine) claimBatchLocked(b *batch) (ok, busy bool, err error) {
	alone := e.wait.Active() == 1
	for k := range e.rings {
		i := (e.turn + k) % len(e.rings)
		c := &e.rings[i]
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
		*b = batch{
			ring:     i,
			claim:    cl,
			pos:      cl.Start,
			limit:    min(cl.End, cl.Start+c.batchBytes),
			producer: c.producerPos,
			holding:  true,
		}
		e.claimedLocked()
		return true, false, nil
	}
	return false, busy, nil
}

// finishLocked ends a loop's batch: consumed up to b.pos, the rest given
// back, and the consumer position published, so the kernel never waits
// for more than a batch.
func (e *engine) finishLocked(b *batch) {
	c := &e.rings[b.ring]
	b.holding = false
	if b.err != nil && c.err == nil {
		c.err = b.err
	}
	gaveBack := c.claims.Release(b.claim, b.pos)
	if !e.released {
		c.publish()
	}
	e.releasedLocked(c, gaveBack)
}

// endLoop ends a loop however it stops: its batch is released and what it
// consumed published.
func (e *engine) endLoop(b *batch) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b.holding {
		e.finishLocked(b)
	}
	e.wait.End()
	e.publishAllLocked()
	e.releaseLocked()
}
