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
	c, pos, length, err := r.claimOneLocked()
	if err != nil {
		return err
	}
	r.copyOut(rec, pos, length)
	rec.Remaining = int(r.producerPos - c.end)
	r.releaseLocked(c, c.end)
	return nil
}

// claimOneLocked claims the next record that is not discarded, waiting
// for one as a read does: ReadInto's and PeekInto's slow path.
func (r *Reader) claimOneLocked() (c claim, pos uint64, length uint32, err error) {
	op := r.beginOpLocked()
	defer r.endOpLocked()
	for {
		c, pos, length, ok, busy, err := r.claimLocked(true)
		if err != nil || ok {
			return c, pos, length, err
		}
		if err := r.waitLocked(&op, busy); err != nil {
			return claim{}, 0, 0, err
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
// (BenchmarkRead mode=copy). It returns false when the slow path must
// decide (see nextInlineLocked).
func (r *Reader) readNextLocked(rec *Record) bool {
	pos, length, next, ok := r.nextInlineLocked()
	if !ok {
		return false
	}
	r.copyOut(rec, pos, length)
	rec.Remaining = int(r.producerPos - next)
	r.consumeInlineLocked(next)
	return true
}

// nextInlineLocked finds the record at the consumer position when no claim
// is outstanding, skipping discarded records; next is where the record
// after it starts. It returns ok false, having changed nothing but skipped
// discarded records, when the slow path must decide: claims outstanding,
// nothing ready, a busy record, or a header that needs an error.
func (r *Reader) nextInlineLocked() (pos uint64, length uint32, next uint64, ok bool) {
	for r.claims.empty() && !r.peekInline && r.err == nil && !r.closed {
		pos = r.consumerPos
		if pos == r.producerPos {
			producer, err := r.ring.loadProducer(pos)
			if err != nil || producer == pos {
				return 0, 0, 0, false
			}
			r.producerPos = producer
		}
		hdr := r.ring.loadHeader(pos)
		length = hdr & lengthMask
		total := recordTotal(length)
		if hdr&busyBit != 0 || total > r.producerPos-pos {
			return 0, 0, 0, false
		}
		next = pos + total
		if hdr&discardBit == 0 {
			return pos, length, next, true
		}
		r.consumeInlineLocked(next)
	}
	return 0, 0, 0, false
}

// consumeInlineLocked moves the consumer position to next, with no claim
// outstanding, and publishes it once enough has piled up.
func (r *Reader) consumeInlineLocked(next uint64) {
	r.consumerPos, r.claimPos = next, next
	if next-r.publishedPos >= r.batchBytes {
		r.publishLocked()
	}
	if r.waiters > 0 {
		// As in releaseLocked: records committed behind an unpublished
		// position woke nobody.
		r.wakeLocked()
	}
}
