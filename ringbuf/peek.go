package ringbuf

import "fmt"

// Peek returns the next record without consuming it. See PeekInto.
func (r *Reader) Peek() (Record, error) {
	var rec Record
	err := r.PeekInto(&rec)
	return rec, err
}

// PeekInto sets rec to the next record without consuming it: RawSample
// is a read-only view of the ring, its capacity its length, valid until
// Consume, also across Close; Read and Records return the records after
// it. One goroutine peeks at a time (ErrConcurrentPeek). It blocks as Read.
func (r *Reader) PeekInto(rec *Record) error {
	if r.copyOnly != nil {
		return errCopyOnly
	}
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	if r.peeking {
		return fmt.Errorf("ringbuf: %w", ErrConcurrentPeek)
	}
	c := &r.consumers[0]
	var (
		cl       claim
		pos, end uint64
		length   uint32
		ok       bool
	)
	if !r.core.Wait.Closed() {
		pos, end, length, ok = c.readyRecord()
	}
	if ok {
		cl = c.claims.Hold(end) // no claim was out: nothing to publish
		r.core.ClaimedLocked()
	} else {
		r.peeking = true // while claimOneLocked waits without the mutex
		var err error
		cl, pos, length, err = r.claimOneLocked(true)
		if err != nil {
			r.peeking = false
			return err
		}
		c.publish() // discarded records skipped on the way
	}
	r.peeking, r.viewHeld, r.peeked = true, true, cl
	rec.RawSample = c.ring.sample(pos, length)
	rec.Remaining = int(c.producerPos - cl.End)
	return nil
}

// Consume consumes the peeked record and ends its view; when it returns,
// the kernel knows the record's space is free, also after Close. It
// returns ErrNotPeeked if no record is peeked (ErrClosed once closed).
func (r *Reader) Consume() error {
	if r.copyOnly != nil {
		return errCopyOnly
	}
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	if !r.viewHeld {
		if r.core.Wait.Closed() {
			return ErrClosed
		}
		return ErrNotPeeked
	}
	r.viewHeld, r.peeking = false, false
	c := &r.consumers[0]
	gaveBack := c.claims.Release(r.peeked, r.peeked.End)
	c.publish()
	r.core.ReleasedLocked(0, gaveBack)
	return r.core.ReleaseLocked()
}
