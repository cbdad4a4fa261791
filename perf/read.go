package perf

import (
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// Read returns the next record, copied. It blocks until a record arrives,
// the deadline passes, Flush or Close is called.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is Read into rec, reusing rec.RawSample's memory unless it is
// a view; when it returns, the kernel knows the record's space is free. A
// record of an unknown type is consumed, as an error (IsUnknownEvent).
func (r *Reader) ReadInto(rec *Record) error {
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	var readErr error // an unknown record type: consumed, and returned
	err := r.core.ReadLocked(func() (ok, busy bool, err error) {
		if err := r.checkPausedLocked(); err != nil {
			return false, false, err
		}
		return r.core.ClaimTurnLocked(false, func(i int, _ bool) (bool, bool, error) {
			c := &r.consumers[i]
			got, end, ok, err := c.claimOne()
			if !ok {
				return false, false, err
			}
			rec.CPU = c.cpu
			if err == nil {
				r.fill(rec, c, got, end)
			}
			c.publish()
			readErr = err
			return true, false, nil
		})
	})
	if err != nil {
		return err
	}
	return readErr
}

// fill copies the record got, ending at end, into rec.
func (r *Reader) fill(rec *Record, c *consumer, got record, end uint64) {
	rec.Remaining = c.remaining(end)
	if got.typ == recordLost {
		rec.RawSample, rec.LostSamples = rec.RawSample[:0], got.lost
		return
	}
	rec.LostSamples = 0
	rec.RawSample = readers.CopyDestination(rec.RawSample, int(got.dataLen), c.buf.mapped())
	c.buf.copyOut(rec.RawSample, got.dataPos)
}
