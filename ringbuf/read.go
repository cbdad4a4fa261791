package ringbuf

import "github.com/ebpf-zc/ebpf/internal/readers"

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
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	c := &r.consumers[0]
	var (
		pos, next uint64
		length    uint32
		ok        bool
	)
	if !r.core.Wait.Closed() {
		pos, length, ok = c.takeReady()
		next = c.claims.Pos()
	}
	if !ok {
		cl, cpos, clength, err := r.claimOneLocked(false)
		if err != nil {
			return err
		}
		pos, length, next = cpos, clength, cl.End
	}
	rec.RawSample = readers.CopyDestination(rec.RawSample, int(length), c.ring.mapped())
	copy(rec.RawSample, c.ring.sample(pos, length))
	rec.Remaining = int(c.producerPos - next)
	c.publish()
	if r.core.Wait.Sleeping() && c.ready() {
		r.core.Wait.Wake() // records behind this one woke nobody
	}
	return nil
}

// claimOneLocked claims the next kept record for Read or Peek, waiting for
// one; with hold, the caller holds it until it releases it.
func (r *Reader) claimOneLocked(hold bool) (cl claim, pos uint64, length uint32, err error) {
	var op waitState
	if err := r.core.Wait.Begin(&op.Ticket); err != nil {
		return claim{}, 0, 0, err
	}
	defer r.core.Wait.End(&op.Ticket)
	c := &r.consumers[0]
	err = r.core.ClaimLocked(&op, false, func() (ok, busy bool, err error) {
		if c.err == nil {
			cl, pos, length, ok, busy = c.claimOne(hold)
		}
		return ok, busy, c.err
	})
	if err != nil {
		return claim{}, 0, 0, err
	}
	if hold {
		r.core.ClaimedLocked()
	}
	return cl, pos, length, nil
}
