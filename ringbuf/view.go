package ringbuf

// view is the Reader's Peek view, under the engine's lock but for
// Consume's reads when it returns a view lent (readers.Loan).
type view struct {
	peeking bool   // a PeekInto is in progress, or its view is held
	held    bool   // PeekInto handed out a view not yet consumed
	claim   claim  // the view's
	ahead   uint32 // what the load ahead read (loadAhead), kept
}

// renew is PeekInto's common case, under the engine's lock: Consume
// returned the last view without the lock (the kernel has its end), and
// the next record of c is committed: the view's claim moves on to it
// (readers.Engine.Renew).
func (v *view) renew(c *consumer, rec *Record) bool {
	pos := v.claim.End
	if pos == c.producerPos || !v.returned(c) {
		return false // the producer position is loaded on the slow path
	}
	h := c.ring.headerAt(pos)
	if h&(busyBit|discardBit) != 0 || h.total() > c.producerPos-pos {
		return false
	}
	cl, ok := c.claims.Renew(v.claim, pos+h.total())
	if !ok {
		return false
	}
	c.publishedPos = pos // Consume published it
	v.claim, v.held, v.peeking = cl, true, true
	v.ahead = c.ring.loadAhead(pos, h.total())
	rec.RawSample = c.ring.sample(pos, h.length())
	rec.Remaining = int(c.producerPos - cl.End)
	return true
}

// returned reports whether the kernel has the lent view's end, from
// Consume (readers.Loan).
func (v *view) returned(c *consumer) bool {
	end := v.claim.End
	return int64(c.ring.consumerPos.load(end)-end) >= 0
}

// release ends the view, if one is held, in c's claims, under the
// engine's lock.
func (v *view) release(c *consumer) (ended int) {
	if !v.held {
		return 0
	}
	v.held, v.peeking = false, false
	c.claims.Release(v.claim, v.claim.End)
	return 1
}
