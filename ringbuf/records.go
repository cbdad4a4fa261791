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
// time and hands the rest back if it stops early.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		var (
			rec Record
			b   batch
			op  waitState
		)
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			yield(nil, ErrClosed)
			return
		}
		r.active++
		r.mu.Unlock()
		// mu is never held while the body runs, so this runs the same way
		// on break, on return and when the body panics.
		defer r.endLoop(&b)
		for {
			if err := r.nextBatch(&b, &op); err != nil {
				yield(nil, err)
				return
			}
			if !r.yieldBatch(&b, &rec, ^uint64(0), yield) {
				return
			}
		}
	}
}

// yieldBatch yields the records of b's claim from b.pos on, at most limit
// bytes of them, and reports whether the loop body asked for more. It
// stops early before a busy record, at a corrupt one (in b.busy, b.err)
// and once the Reader is closed.
//
// The hot loop: one header load per record; nothing is called but yield
// and methods that inline. The checks keep every read inside the claim
// even if the ring changes under us.
func (r *Reader) yieldBatch(b *batch, rec *Record, limit uint64, yield func(*Record, error) bool) bool {
	rg, closed, batchBytes := r.ring, &r.closedFlag, r.batchBytes
	p, start, end := b.pos, b.claim.start, b.claim.end
	if limit < end-p {
		end = p + limit
	}
	for p < end && !closed.Load() {
		h := rg.headerAt(p)
		if h.busy() {
			b.busy = true // claimed without a walk: a producer is still writing
			break
		}
		total := h.total()
		if total > b.claim.end-p {
			b.err = rg.corrupt(p, b.claim.end, h)
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
		if p-start >= batchBytes && p < b.claim.end {
			// A long claim gives back what it read as it goes, so the
			// kernel never waits for more than batchBytes.
			b.pos = p
			start = r.releasePrefix(b)
		}
	}
	b.pos = p
	return true
}

// batch is a Records loop's claim, read outside mu.
type batch struct {
	claim    claim
	pos      uint64 // records below are consumed
	producer uint64 // producer position when claimed
	holding  bool
	busy     bool  // the walk stopped before a busy record
	err      error // the walk stopped at a corrupt record
}

// nextBatch finishes the loop's batch, if it holds one, and claims the
// next, waiting for records as a read does.
func (r *Reader) nextBatch(b *batch, op *waitState) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b.holding {
		yielded := b.pos > b.claim.start
		r.finishBatchLocked(b)
		if b.err != nil && r.err == nil {
			r.err = b.err
		}
		if b.busy && !yielded && b.err == nil {
			// Nothing before the busy record: wait for its producer
			// instead of claiming it again at once.
			if err := r.waitLocked(op, true); err != nil {
				return err
			}
		}
		b.busy, b.err = false, nil
	}
	for {
		if r.closed {
			r.publishLocked()
			return ErrClosed
		}
		c, _, _, ok, busy, _ := r.claimLocked(false, false)
		if ok {
			*b = batch{claim: c, pos: c.start, producer: r.producerPos, holding: true}
			r.users++
			if r.consumerPos-r.publishedPos >= r.batchBytes {
				r.publishLocked()
			}
			return nil
		}
		if err := r.waitLocked(op, busy); err != nil {
			return err
		}
	}
}

// releasePrefix releases the part of the loop's claim below b.pos and
// publishes it, and returns where the claim now starts.
func (r *Reader) releasePrefix(b *batch) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	b.claim = r.releasePrefixLocked(b.claim, b.pos)
	r.publishLocked()
	return b.claim.start
}

// finishBatchLocked releases a loop's batch: consumed up to b.pos, the
// rest given back.
func (r *Reader) finishBatchLocked(b *batch) {
	r.users--
	b.holding = false
	r.releaseLocked(b.claim, b.pos)
}

// endLoop ends a Records loop however it stops: its batch is released and
// what it consumed published.
func (r *Reader) endLoop(b *batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b.holding {
		r.finishBatchLocked(b)
	}
	r.active--
	r.publishLocked()
	r.releaseResourcesLocked()
}
