package ringbuf

import (
	"iter"
	"sync/atomic"
	"unsafe"
)

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
			c, ok, busy, err := r.claimBatchLocked()
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
			batchBytes := r.batchBytes
			r.mu.Unlock()

			// The hot loop: one header load per record, decoded here so
			// nothing is called but yield, with its state in locals (pos
			// and held live in memory for the deferred release). The
			// checks keep every read inside the claim even if the ring
			// changes under us.
			busy = false
			var prefetch uint64
			data, mask, closed := r.ring.data, r.ring.mask, &r.closedFlag
			p, start, end := pos, held.start, held.end
			for p < end && !closed.Load() {
				hdr := atomic.LoadUint32((*uint32)(unsafe.Add(data, p&mask)))
				if hdr&busyBit != 0 {
					busy = true // claimed without a walk: a producer is still writing
					break
				}
				length := hdr & lengthMask
				total := recordTotal(length)
				if total > end-p {
					_, _, _, err := r.ring.header(p, end)
					r.mu.Lock()
					r.err = err
					r.finishBatchLocked(held, p)
					holding = false
					r.mu.Unlock()
					yield(nil, err)
					r.mu.Lock()
					return
				}
				// Touch the ring ahead of the walk, within the claim: the
				// loads overlap the misses a header walk takes one by one.
				if ahead := p + lookahead; ahead < end && total < lookaheadBelow {
					prefetch += *(*uint64)(unsafe.Add(data, ahead&mask&^7))
				}
				next := p + total
				if hdr&discardBit == 0 {
					rec.RawSample = unsafe.Slice((*byte)(unsafe.Add(data, p&mask+headerSize)), length)
					rec.Remaining = int(producer - next)
					pos = p // a panicking body leaves this record unconsumed
					if !yield(&rec, nil) {
						pos = next
						return // the deferred function releases
					}
				}
				p = next
				if p-start >= batchBytes && p < end {
					// A long claim gives back what it read as it goes, so
					// the kernel never waits for more than batchBytes.
					r.mu.Lock()
					held = r.releasePrefixLocked(held, p)
					r.mu.Unlock()
					start = held.start
				}
			}
			pos = p

			r.mu.Lock()
			r.prefetch += prefetch
			yielded := pos > held.start
			r.finishBatchLocked(held, pos)
			holding = false
			if busy && !yielded {
				// Nothing before the busy record: wait for its producer
				// as a read would, instead of claiming it again at once.
				if err := r.waitLocked(&op, true); err != nil {
					r.mu.Unlock()
					yield(nil, err)
					r.mu.Lock()
					return
				}
			}
		}
	}
}

// claimBatchLocked claims records for a Records loop. A loop that runs
// alone claims everything produced without reading a header: the producer
// position always falls on a record boundary, so the loop reads each
// header once, as it yields, and gives space back as it goes. With other
// reads in progress it claims at most batchBytes, so they share the ring.
func (r *Reader) claimBatchLocked() (c claim, ok, busy bool, err error) {
	r.queuePeekLocked()
	if r.err != nil {
		return claim{}, false, false, r.err
	}
	if r.active > 1 || !r.claims.empty() {
		c, _, _, ok, busy, err = r.claimLocked(false)
		return c, ok, busy, err
	}
	producer, err := r.ring.loadProducer(r.consumerPos)
	if err != nil {
		r.err = err
		return claim{}, false, false, err
	}
	r.producerPos = producer
	if producer == r.claimPos {
		return claim{}, false, false, nil
	}
	c = claim{start: r.claimPos, end: producer}
	r.claimPos = producer
	r.claims.push(c)
	return c, true, false, nil
}

// releasePrefixLocked releases the part of held claim c below pos and
// returns the part still held.
func (r *Reader) releasePrefixLocked(c claim, pos uint64) claim {
	i := r.claims.find(c.start)
	if i < 0 || r.closed {
		return c
	}
	r.claims.split(i, pos, claimHeld)
	r.claims.setState(i, claimReleased)
	r.advanceLocked()
	return claim{start: pos, end: c.end}
}

// finishBatchLocked releases a loop's batch up to pos.
func (r *Reader) finishBatchLocked(c claim, pos uint64) {
	r.users--
	if r.closed {
		return
	}
	r.releaseLocked(c, pos)
}
