package ringbuf

import (
	"fmt"
	"sync/atomic"
)

// peekView is the Reader's peeked view, under the engine's mutex but for
// consumeTicket and ended. A fast view is not listed in the claims: Consume ends
// it without the mutex, or a holder that cannot wait takes it over
// (docs/architecture.md, "Peek view and fast Consume").
type peekView struct {
	peeking bool   // a PeekInto is in progress, or its view is held
	held    bool   // PeekInto handed out a view not yet consumed
	fast    bool   // held, unlisted, and Consume may end it without the mutex
	lines   uint32 // what loadLines read, kept (in the bools' padding)
	claim   claim
	ticket  uint64 // ended when the fast view was handed out

	consumeTicket consumeTicket // the peeking goroutine's: PeekInto writes it, Consume reads it
	// ended counts fast views: +1 when Consume ends one, +2 when the mutex
	// takes one over. It only grows, so a stale ticket never matches.
	ended atomic.Uint64
}

// consumeTicket is what Consume needs to end a fast view without the mutex.
type consumeTicket struct {
	fast        bool
	ticket, end uint64
}

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
// returns ErrNotPeeked if no record is peeked (ErrClosed once closed).
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

// settlePeekLocked reports whether no fast view is out. A fast view that
// Consume ended is settled; with takeOver, one still held is listed as a
// held claim, for Consume to end under the mutex.
func (e *engine) settlePeekLocked(takeOver bool) bool {
	v := &e.peek
	if !v.fast {
		return true
	}
	c := &e.consumers[0]
	if v.ended.Load() != v.ticket+1 {
		if !takeOver {
			return false
		}
		if v.ended.CompareAndSwap(v.ticket, v.ticket+2) {
			v.fast = false
			c.claims.Restore(v.claim)
			return true
		}
		// Consume ended it meanwhile: only its compare-and-swap moves ended.
	}
	v.peeking, v.held, v.fast = false, false, false
	c.publishedPos = v.claim.End // Consume published it
	e.core.UserDoneLocked(0, false)
	c.publish()
	return true
}

// publishLocked tells the kernel ring i's consumer position, unless a
// fast view holds it: one with records after it that could be published
// is taken over, so that its Consume publishes them.
func (e *engine) publishLocked(i int) {
	if i == 0 && e.peek.fast {
		e.publishPastPeekLocked()
		return
	}
	e.consumers[i].publish()
}

// publishPastPeekLocked is publishLocked for ring 0 while a fast view is out.
func (e *engine) publishPastPeekLocked() {
	c := &e.consumers[0]
	if e.settlePeekLocked(c.claims.Pos() != e.peek.claim.End || !c.claims.Empty()) {
		c.publish()
	}
}
