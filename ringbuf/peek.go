package ringbuf

// Peek returns the next record without consuming it. See PeekInto.
func (r *Reader) Peek() (Record, error) {
	var rec Record
	err := r.PeekInto(&rec)
	return rec, err
}

// PeekInto sets rec to the next record without consuming it: RawSample
// aliases the ring, read-only, with its capacity equal to its length. The
// view is valid until Consume or Close. Peeking again before Consume
// returns the same record; Consume moves past it. A peeked record belongs
// to the peeking goroutine: Read and Records return the records after it.
// Peek, PeekInto and Consume serve one goroutine at a time. Like Read,
// PeekInto blocks until a record arrives, the deadline passes, Flush or
// Close is called.
func (r *Reader) PeekInto(rec *Record) error {
	// Only the peeking goroutine writes the peek state, so it may read it
	// without mu. The closed check keeps a view from outliving Close.
	if r.peeked && !r.closedFlag.Load() {
		r.peekView(rec)
		return nil
	}
	// A lock per call, not per batch: a batch claimed for the peeker
	// would leave its unpeeked records stranded when the peeker stops and
	// Read or Records wait (TestPeekThenOtherReads); BenchmarkRead
	// mode=peek measures the price.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if !r.peeked && !r.peekNextLocked() {
		c, pos, length, err := r.claimOneLocked()
		if err != nil {
			return err
		}
		r.setPeekLocked(c, pos, length, false)
	}
	r.peekView(rec)
	return nil
}

// peekNextLocked peeks the record at the consumer position when no claim
// is outstanding, as with one reader, without queueing a claim: the record
// is [consumerPos, claimPos) until another caller claims and queues it.
func (r *Reader) peekNextLocked() bool {
	pos, length, next, ok := r.nextInlineLocked()
	if !ok {
		return false
	}
	r.claimPos = next
	r.setPeekLocked(claim{start: pos, end: next}, pos, length, true)
	return true
}

func (r *Reader) setPeekLocked(c claim, pos uint64, length uint32, inline bool) {
	r.peeked, r.peekInline, r.peekClaim = true, inline, c
	r.peekPos, r.peekLen, r.peekRemains = pos, length, int(r.producerPos-c.end)
	r.users++
}

// queuePeekLocked queues an inline peek claim before another caller
// claims, so that the consumer position cannot pass the peeked record.
func (r *Reader) queuePeekLocked() {
	if r.peekInline {
		r.peekInline = false
		r.claims.push(r.peekClaim)
	}
}

func (r *Reader) peekView(rec *Record) {
	rec.RawSample = r.ring.sample(r.peekPos, r.peekLen)
	rec.Remaining = r.peekRemains
}

// Consume consumes the peeked record and ends its view. It returns
// ErrNotPeeked if no record is peeked, and ErrClosed after Close, when it
// releases the view without consuming.
func (r *Reader) Consume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.peeked {
		if r.closed {
			return ErrClosed
		}
		return ErrNotPeeked
	}
	r.peeked = false
	r.users--
	inline := r.peekInline
	r.peekInline = false
	if r.closed {
		if err := r.releaseResourcesLocked(); err != nil {
			return err
		}
		return ErrClosed
	}
	if inline {
		r.consumeInlineLocked(r.peekClaim.end)
	} else {
		r.releaseLocked(r.peekClaim, r.peekClaim.end)
	}
	return nil
}
