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
// also on break. The loop blocks while the ring is empty and ends with one
// last pair carrying the error that stopped it: os.ErrDeadlineExceeded at
// the deadline, ErrFlushed after Flush once every record in the ring has
// been yielded, ErrClosed after Close.
//
// Several goroutines may range over the same Reader at once; each record is
// yielded to exactly one of them. A loop claims a batch of records at a
// time and hands the rest of it back if it breaks early.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		var rec Record
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			yield(nil, ErrClosed)
			return
		}
		op := r.beginOpLocked()
		var (
			held claim  // the batch being yielded, outside mu
			pos  uint64 // the first record of held not yet consumed
		)
		holding := false
		defer func() {
			// Runs on break, on return and when the body panics: give the
			// batch back, the records before pos consumed.
			if holding {
				r.mu.Lock()
				r.finishBatchLocked(held, pos)
			}
			r.endOpLocked()
			r.releaseResourcesLocked()
			r.mu.Unlock()
		}()
		for {
			if r.closed {
				r.mu.Unlock()
				yield(nil, ErrClosed)
				r.mu.Lock()
				return
			}
			c, _, _, ok, busy, err := r.claimLocked(false)
			if err != nil {
				r.mu.Unlock()
				yield(nil, err)
				r.mu.Lock()
				return
			}
			if !ok {
				if err := r.waitLocked(&op, busy); err != nil {
					r.mu.Unlock()
					yield(nil, err)
					r.mu.Lock()
					return
				}
				continue
			}
			held, pos, holding = c, c.start, true
			r.users++
			producer := r.producerPos
			r.mu.Unlock()

			for pos < held.end && !r.closedFlag.Load() {
				length, total, state, err := r.ring.header(pos, held.end)
				if err != nil {
					// Checked when claimed: the ring changed under us.
					r.mu.Lock()
					r.err = err
					r.finishBatchLocked(held, pos)
					holding = false
					r.mu.Unlock()
					yield(nil, err)
					r.mu.Lock()
					return
				}
				next := pos + total
				if state == stateReady {
					rec.RawSample = r.ring.sample(pos, length)
					rec.Remaining = int(producer - next)
					if !yield(&rec, nil) {
						pos = next
						return // the deferred function releases
					}
				}
				pos = next
			}

			r.mu.Lock()
			r.finishBatchLocked(held, pos)
			holding = false
		}
	}
}

// finishBatchLocked releases a loop's batch up to pos.
func (r *Reader) finishBatchLocked(c claim, pos uint64) {
	r.users--
	if r.closed {
		return
	}
	r.releaseLocked(c, pos)
}
