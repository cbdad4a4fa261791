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
// rec.RawSample, so a loop that reuses one Record does not allocate. When
// it returns, the kernel knows the record's space is free.
func (r *Reader) ReadInto(rec *Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	c, pos, length, err := r.claimOneLocked(true)
	if err != nil {
		return err
	}
	// A Peek view aliases the read-only ring: never copy into it.
	if int(length) > cap(rec.RawSample) || r.ring.contains(rec.RawSample) {
		rec.RawSample = make([]byte, length)
	}
	rec.RawSample = rec.RawSample[:length]
	copy(rec.RawSample, r.ring.sample(pos, length))
	rec.Remaining = int(r.producerPos - c.end)
	r.publishLocked()
	r.wakeWaitersLocked() // records behind this one woke nobody
	return nil
}

// peekState is the record the peeking goroutine holds. Only that goroutine
// writes it, under mu, so it may read it without mu.
type peekState struct {
	held      bool // counted in users
	claim     claim
	pos       uint64
	length    uint32
	remaining int
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
	if r.peek.held && !r.closedFlag.Load() {
		r.peekView(rec)
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if !r.peek.held {
		c, pos, length, err := r.claimOneLocked(false)
		if err != nil {
			return err
		}
		r.peek = peekState{true, c, pos, length, int(r.producerPos - c.end)}
		r.users++
		r.publishLocked() // discarded records skipped on the way
	}
	r.peekView(rec)
	return nil
}

func (r *Reader) peekView(rec *Record) {
	rec.RawSample = r.ring.sample(r.peek.pos, r.peek.length)
	rec.Remaining = r.peek.remaining
}

// Consume consumes the peeked record and ends its view; when it returns,
// the kernel knows the record's space is free. It returns ErrNotPeeked if
// no record is peeked, and ErrClosed after Close, when it releases the
// view without consuming.
func (r *Reader) Consume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.peek.held {
		if r.closed {
			return ErrClosed
		}
		return ErrNotPeeked
	}
	r.peek.held = false
	r.users--
	if r.closed {
		if err := r.releaseResourcesLocked(); err != nil {
			return err
		}
		return ErrClosed
	}
	r.releaseLocked(r.peek.claim, r.peek.claim.end)
	r.publishLocked()
	return nil
}
