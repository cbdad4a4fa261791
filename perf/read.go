package perf

import (
	"github.com/ebpf-zc/ebpf/internal/readers"
)

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
// it returns, the kernel knows the record's space is free. A record of an
// unknown type is consumed and returned as an error (IsUnknownEvent).
func (r *Reader) ReadInto(rec *Record) error {
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	var op readers.WaitState
	waiting := false // counted by the waiter only once it must wait
	defer func() {
		if waiting {
			r.core.Wait.End(&op.Ticket)
		}
	}()
	for {
		if r.core.Wait.Closed() {
			return ErrClosed
		}
		if err := r.checkPausedLocked(); err != nil {
			return err
		}
		for k := range r.consumers {
			i := (r.turn + k) % len(r.consumers)
			c := &r.consumers[i]
			got, end, ok, err := c.claimOne()
			if !ok {
				if err != nil {
					return err
				}
				continue
			}
			r.turn = i // stay on this CPU while it has records
			rec.CPU = c.cpu
			if err == nil {
				r.fill(rec, c, got, end)
			}
			c.publish()
			return err
		}
		if !waiting {
			if err := r.core.Wait.Begin(&op.Ticket); err != nil {
				return err
			}
			waiting = true
		}
		if err := r.core.WaitLocked(&op, false); err != nil {
			return err
		}
	}
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
