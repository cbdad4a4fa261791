package ringbuf

import (
	"fmt"
)

// Peek returns the next record without consuming it. See [Reader.PeekInto].
func (r *Reader) Peek() (Record, error) {
	var rec Record
	err := r.PeekInto(&rec)
	return rec, err
}

// PeekInto sets rec to the next record without consuming it: RawSample
// is a read-only view of the ring, its capacity its length, valid until
// [Reader.Consume], also across Close; Read and Records return the records
// after it. One goroutine peeks at a time ([ErrConcurrentPeek]). It blocks
// as [Reader.Read].
func (r *Reader) PeekInto(rec *Record) error {
	if r.copyOnly != nil {
		return errCopyOnly
	}
	r.core.Mu.Lock()
	if r.peekNextLocked(rec) {
		r.core.Mu.Unlock()
		return nil
	}
	return r.peekLocked(rec)
}

// peekNextLocked is PeekInto's common case: Consume ended a fast view,
// nothing was read since, and the next record is ready. It becomes the
// next fast view, and the view's user passes to it. Apart and without
// defer, for speed (docs/architecture.md).
func (r *Reader) peekNextLocked(rec *Record) bool {
	v := &r.peek
	c := &r.consumers[0]
	if !v.fast || v.ended.Load() != v.ticket+1 || c.claims.Pos() != v.claim.End || r.core.Wait.Closed() {
		return false
	}
	pos, h, ok := c.readyRecord()
	if !ok {
		return false
	}
	end := pos + h.total()
	v.lines = c.ring.loadLines(pos, h.total(), streamMax)
	c.publishedPos = pos // Consume published it
	c.claims.Skip(end)
	v.ticket++
	v.claim = claim{Start: pos, End: end}
	v.consumeTicket = consumeTicket{fast: true, ticket: v.ticket, end: end}
	rec.RawSample = c.ring.sample(pos, h.length())
	rec.Remaining = int(c.producerPos - end)
	return true
}

// peekLocked is PeekInto but for its common case.
func (r *Reader) peekLocked(rec *Record) error {
	defer r.core.Mu.Unlock()
	v := &r.peek
	c := &r.consumers[0]
	if v.peeking && !(v.fast && r.settlePeekLocked(false)) {
		return fmt.Errorf("ringbuf: %w", ErrConcurrentPeek)
	}
	var (
		cl  claim
		pos uint64
		h   header
		ok  bool
	)
	if !r.core.Wait.Closed() && c.produced() {
		pos, h, ok = c.readyRecord()
	}
	length := h.length()
	fast := ok && c.publishedPos == pos
	switch {
	case fast:
		cl = claim{Start: pos, End: pos + h.total()}
		c.claims.Skip(cl.End)
		v.ticket = v.ended.Load()
	case ok:
		cl = c.claims.Hold(pos + h.total())
	default:
		v.peeking = true // while claimOneLocked waits without the mutex
		var err error
		cl, pos, length, err = r.claimOneLocked(true) // counts its user
		if err != nil {
			v.peeking = false
			return err
		}
		c.publish() // discarded records skipped on the way
	}
	if ok {
		r.core.AddUserLocked()
	}
	v.peeking, v.held, v.fast, v.claim = true, true, fast, cl
	v.consumeTicket = consumeTicket{fast: fast, ticket: v.ticket, end: cl.End}
	rec.RawSample = c.ring.sample(pos, length)
	rec.Remaining = int(c.producerPos - cl.End)
	return nil
}

// Consume consumes the peeked record and ends its view; when it returns,
// the kernel knows the record's space is free, also after Close. It
// returns [ErrNotPeeked] if no record is peeked ([ErrClosed] once closed).
func (r *Reader) Consume() error {
	if r.copyOnly != nil {
		return errCopyOnly
	}
	v := &r.peek
	if l := v.consumeTicket; l.fast {
		// The view counts as a user: the engine frees nothing until this
		// compare-and-swap, or a takeover, ends it.
		v.consumeTicket.fast = false
		r.consumers[0].ring.publishConsumer(l.end)
		if v.ended.CompareAndSwap(l.ticket, l.ticket+1) {
			return nil
		}
		// Taken over: ended under the mutex.
	}
	return r.consumeLocked()
}

// consumeLocked is Consume under the mutex: for a view that is not fast,
// or was taken over. Apart, so that Consume's fast path sets up no defer.
func (r *Reader) consumeLocked() error {
	v := &r.peek
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	if !r.settlePeekLocked(false) {
		// Fast and held: its ticket was spent by a Consume still running.
		return fmt.Errorf("ringbuf: %w: another Consume is ending the view", ErrNotPeeked)
	}
	if !v.held {
		if r.core.Wait.Closed() {
			return ErrClosed
		}
		return ErrNotPeeked
	}
	v.held, v.peeking = false, false
	c := &r.consumers[0]
	gaveBack := c.claims.Release(v.claim, v.claim.End)
	c.publish()
	r.core.UserDoneLocked(0, gaveBack)
	return r.core.FreeIfUnusedLocked()
}
