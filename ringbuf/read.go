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
	if r.readNextLocked(rec) {
		return nil
	}
	op := r.beginOpLocked()
	defer r.endOpLocked()
	for {
		c, pos, length, ok, busy, err := r.claimLocked(true)
		if err != nil {
			return err
		}
		if ok {
			r.copyOut(rec, pos, length)
			rec.Remaining = int(r.producerPos - c.end)
			r.releaseLocked(c, c.end)
			return nil
		}
		if err := r.waitLocked(&op, busy); err != nil {
			return err
		}
	}
}

// copyOut copies the record at pos into rec, reusing rec.RawSample's
// capacity unless it is a Peek view: that aliases the read-only ring.
func (r *Reader) copyOut(rec *Record, pos uint64, length uint32) {
	if int(length) <= cap(rec.RawSample) && !r.isView(rec.RawSample) {
		rec.RawSample = rec.RawSample[:length]
	} else {
		rec.RawSample = make([]byte, length)
	}
	copy(rec.RawSample, r.ring.sample(pos, length))
}

// readNextLocked is ReadInto's path when no claim is outstanding, as with
// one reader: it copies the record at the consumer position and moves the
// position past it at once, with no claim to queue and release
// (BenchmarkRead mode=copy). It returns false, having changed nothing but
// skipped discarded records, when the slow path must decide: nothing
// ready, a busy record, or a header that needs an error.
func (r *Reader) readNextLocked(rec *Record) bool {
	for r.claims.empty() && r.err == nil && !r.closed {
		pos := r.consumerPos
		if pos == r.producerPos {
			producer, err := r.ring.loadProducer(pos)
			if err != nil || producer == pos {
				return false
			}
			r.producerPos = producer
		}
		hdr := r.ring.loadHeader(pos)
		length := hdr & lengthMask
		total := recordTotal(length)
		if hdr&busyBit != 0 || total > r.producerPos-pos {
			return false
		}
		next := pos + total
		ready := hdr&discardBit == 0
		if ready {
			r.copyOut(rec, pos, length)
			rec.Remaining = int(r.producerPos - next)
		}
		r.consumerPos, r.claimPos = next, next
		if next-r.publishedPos >= r.batchBytes {
			r.publishLocked()
		}
		if r.waiters > 0 {
			// As in releaseLocked: records committed behind an unpublished
			// position woke nobody.
			r.wakeLocked()
		}
		if ready {
			return true
		}
	}
	return false
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
