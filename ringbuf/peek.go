//go:build !windows

package ringbuf

import (
	"fmt"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// Peek returns the next record without consuming it. See [Reader.PeekInto].
func (r *Reader) Peek() (Record, error) {
	var rec Record
	err := r.PeekInto(&rec)
	return rec, err
}

// PeekInto sets rec to the next record without consuming it: RawSample
// is a read-only view of the ring, its capacity its length, valid until
// [Reader.Consume], also across Close; Read and Records return the records
// after it. One goroutine peeks at a time ([ErrConcurrentPeek]). It blocks
// as [Reader.Read]. A nil rec is refused, and nothing is peeked.
func (r *Reader) PeekInto(rec *Record) error {
	if rec == nil {
		return errNilRecord("PeekInto")
	}
	p, c := &r.peek, &r.consumers[0]
	if r.engine.Renew(func() bool { return p.renew(c, rec) }) {
		return nil
	}
	mine := false // this call set peeking
	return r.engine.Read(func(int, bool) (readers.Take, error) {
		if !mine {
			if p.peeking {
				return readers.None, fmt.Errorf("ringbuf: %w", ErrConcurrentPeek)
			}
			p.peeking, mine = true, true
		}
		oldest := c.claims.Empty() // what it holds, Consume may end without the lock
		cl, pos, length, take, err := c.takeOne(true)
		if take == readers.Held {
			if oldest {
				take = readers.Lent
			}
			p.held, p.claim = true, cl
			p.ahead = c.ring.loadAhead(pos, cl.End-pos)
			rec.RawSample = c.ring.sample(pos, length)
			rec.Remaining = int(c.producerPos - cl.End)
		}
		return take, err
	}, func() {
		if mine {
			p.peeking = false
		}
	})
}

// Consume consumes the peeked record and ends its view; when it returns,
// the kernel knows the record's space is free, also after Close, unless a
// loop body holds an older record (the package doc). It returns
// [ErrNotPeeked] if no record is peeked ([ErrClosed] once closed).
func (r *Reader) Consume() error {
	// A view lent (readers.Loan) ends with one compare-and-swap and one
	// store, without the lock.
	end := r.peek.claim.End // before the loan is back: then another PeekInto may move it on
	if ret, ok := r.loan.BeginReturn(); ok {
		r.consumers[0].ring.publishConsumer(end)
		if ret.CalledBack() {
			return r.engine.Returned() // it must hear of it now; a closed reader's last claim frees it
		}
		return nil
	}
	held := false
	err := r.engine.Release(0, func() int {
		held = r.peek.held && !r.loan.Returning() // another Consume returns it
		if !held {
			return 0
		}
		return r.releasePeek()
	})
	switch {
	case held:
		return err
	case err != nil:
		return err // ErrClosed
	}
	return ErrNotPeeked
}
