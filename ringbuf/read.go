package ringbuf

// Read returns the next record, copied. It blocks until a record arrives,
// the deadline passes ([Reader.SetDeadline]), [Reader.Flush] or
// [Reader.Close] is called.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is [Reader.Read] into rec, reusing rec.RawSample's memory unless it is
// a view; when it returns, the kernel knows the record's space is free.
func (r *Reader) ReadInto(rec *Record) error {
	if r.copyOnly != nil {
		return readIntoUpstream(r.copyOnly, rec)
	}
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	c := &r.consumers[0]
	var (
		pos uint64
		h   header
		ok  bool
	)
	if !r.core.Wait.Closed() {
		pos, h, ok = c.readyRecord()
	}
	end, length := pos+h.total(), h.length()
	if ok {
		c.claims.Skip(end) // copied before the mutex is let go
	} else {
		cl, clPos, clLength, err := r.claimOneLocked(false)
		if err != nil {
			return err
		}
		pos, end, length = clPos, cl.End, clLength
	}
	rec.RawSample = r.core.CopyDestinationLocked(rec.RawSample, int(length))
	copy(rec.RawSample, c.ring.sample(pos, length))
	rec.Remaining = int(c.producerPos - end)
	// publishLocked(0), written out: it is too large to inline, and
	// ReadInto would pay a call a record for the rare fast view.
	if r.peek.fast {
		r.publishPastPeekLocked()
	} else {
		c.publish()
	}
	if !r.core.Wait.Idle() && c.ready() {
		r.core.Wait.Wake() // records behind this one woke nobody
	}
	return nil
}

// claimOneLocked is consumer.claimOne, waiting for a record. pos is the
// record's position (discarded records may lie between cl.Start and it).
func (r *Reader) claimOneLocked(hold bool) (cl claim, pos uint64, length uint32, err error) {
	c := &r.consumers[0]
	err = r.core.ReadLocked(func() (ok, busy bool, err error) {
		if c.err == nil {
			cl, pos, length, ok, busy = c.claimOne(hold)
		}
		return ok, busy, c.err
	})
	if err != nil {
		return claim{}, 0, 0, err
	}
	if hold {
		r.core.AddUserLocked()
	}
	return cl, pos, length, nil
}
