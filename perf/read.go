package perf

// Read returns the next record, copied. It blocks until a record arrives,
// the deadline passes, Flush or Close is called.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is [Reader.Read] into rec, reusing rec.RawSample's memory unless it is
// a view; when it returns, the kernel knows the record's space is free. A
// record of an unknown type is consumed, as an error ([IsUnknownEvent]).
func (r *Reader) ReadInto(rec *Record) error {
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	var readErr error // an unknown record type: consumed, and returned
	err := r.core.ReadLocked(func() (ok, busy bool, err error) {
		return r.core.ClaimTurnLocked(false, func(i int, _ bool) (bool, bool, error) {
			// All that is produced: nobody sees the claim before it ends.
			b, ok, err := r.claimLocked(i, true, &r.readScratch)
			if !ok {
				return false, false, err
			}
			read := false
			b.walkRecords(&r.readRec, func(got *Record, err error) bool {
				read, readErr = true, err
				if err == nil {
					rec.Remaining, rec.LostSamples = got.Remaining, got.LostSamples
					rec.RawSample = r.core.CopyDestinationLocked(rec.RawSample, len(got.RawSample))
					copy(rec.RawSample, got.RawSample)
				}
				rec.CPU = b.c.cpu
				return false
			})
			b.releaseLocked()
			return read, false, b.c.err
		})
	})
	if err != nil {
		return err
	}
	return readErr
}
