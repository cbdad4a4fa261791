package ringbuf

// Read returns the next record, copied: the bytes stay valid after later
// reads and after Close. It blocks until a record arrives, the deadline
// passes, Flush or Close is called.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is like Read but copies into rec, reusing the capacity of
// rec.RawSample, so a loop that reuses one Record does not allocate.
func (r *Reader) ReadInto(rec *Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	op := r.beginOpLocked()
	defer r.endOpLocked()
	for {
		c, pos, length, ok, busy, err := r.claimLocked(true)
		if err != nil {
			return err
		}
		if ok {
			sample := r.ring.sample(pos, length)
			if int(length) <= cap(rec.RawSample) && !r.isView(rec.RawSample) {
				rec.RawSample = rec.RawSample[:length]
			} else {
				// Never copy into a Peek view: it aliases the read-only ring.
				rec.RawSample = make([]byte, length)
			}
			copy(rec.RawSample, sample)
			rec.Remaining = int(r.producerPos - c.end)
			r.releaseLocked(c, c.end)
			return nil
		}
		if err := r.waitLocked(&op, busy); err != nil {
			return err
		}
	}
}

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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if !r.peeked {
		op := r.beginOpLocked()
		defer r.endOpLocked()
		for {
			c, pos, length, ok, busy, err := r.claimLocked(true)
			if err != nil {
				return err
			}
			if ok {
				r.peeked, r.peekClaim, r.peekPos, r.peekLen = true, c, pos, length
				r.peekRemains = int(r.producerPos - c.end)
				r.users++
				break
			}
			if err := r.waitLocked(&op, busy); err != nil {
				return err
			}
		}
	}
	rec.RawSample = r.ring.sample(r.peekPos, r.peekLen)
	rec.Remaining = r.peekRemains
	return nil
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
	if r.closed {
		if err := r.releaseResourcesLocked(); err != nil {
			return err
		}
		return ErrClosed
	}
	r.releaseLocked(r.peekClaim, r.peekClaim.end)
	return nil
}
