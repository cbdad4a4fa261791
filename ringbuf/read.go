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
	pos, length, next, ok := r.takeReadyLocked()
	if !ok {
		c, cpos, clength, err := r.claimOneLocked(true)
		if err != nil {
			return err
		}
		pos, length, next = cpos, clength, c.end
	}
	// A Peek view aliases the read-only ring: never copy into it.
	if int(length) > cap(rec.RawSample) || r.ring.contains(rec.RawSample) {
		rec.RawSample = make([]byte, length)
	}
	rec.RawSample = rec.RawSample[:length]
	copy(rec.RawSample, r.ring.sample(pos, length))
	rec.Remaining = int(r.producerPos - next)
	r.publishLocked()
	r.wakeWaitersLocked() // records behind this one woke nobody
	return nil
}
