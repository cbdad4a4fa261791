//go:build !windows

package ringbuf

import (
	"fmt"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// peek is the Reader's peeked record, under the engine's lock.
type peek struct {
	peeking bool   // a PeekInto is in progress, or its view is held
	held    bool   // PeekInto handed out a view not yet consumed
	claim   claim  // the view's
	lines   uint32 // what the stream loads read, kept (stream.go)
}

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
	if r.engine.Renew(func() bool { return r.renewPeek(rec) }) {
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
			p.lines = c.ring.loadLines(pos, cl.End-pos, streamMax)
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

// renewPeek is PeekInto's common case, under the engine's lock: Consume
// returned the last view without the lock (the kernel has its end), and
// the next record is committed: the view's claim moves on to it
// (readers.Engine.Renew).
func (r *reader) renewPeek(rec *Record) bool {
	p, c := &r.peek, &r.consumers[0]
	pos := p.claim.End
	if pos == c.producerPos || !r.peekReturned() {
		return false // the producer position is loaded on the slow path
	}
	h := c.ring.headerAt(pos)
	if h&(busyBit|discardBit) != 0 || h.total() > c.producerPos-pos {
		return false
	}
	cl, ok := c.claims.Renew(p.claim, pos+h.total())
	if !ok {
		return false
	}
	c.publishedPos = pos // Consume published it
	p.claim, p.held, p.peeking = cl, true, true
	p.lines = c.ring.loadLines(pos, h.total(), streamMax)
	rec.RawSample = c.ring.sample(pos, h.length())
	rec.Remaining = int(c.producerPos - cl.End)
	return true
}

// Consume consumes the peeked record and ends its view; when it returns,
// the kernel knows the record's space is free, also after Close. It
// returns [ErrNotPeeked] if no record is peeked ([ErrClosed] once closed).
func (r *Reader) Consume() error {
	// A view lent (readers.Loan) ends with one compare-and-swap and one
	// store, without the lock.
	end := r.peek.claim.End // before the loan is back: then another PeekInto may move it on
	if r.loan.BeginReturn() {
		r.consumers[0].ring.publishConsumer(end)
		if r.loan.CalledBack() {
			r.engine.Release(0, r.releasePeek) // tell the engine, which settles it
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

// peekReturned reports whether the kernel has the lent view's end, from
// Consume (readers.Loan).
func (r *reader) peekReturned() bool {
	c := &r.consumers[0]
	end := r.peek.claim.End
	return int64(c.ring.consumerPos.load(end)-end) >= 0
}

// releasePeek ends the view, if one is held, under the engine's lock.
func (r *reader) releasePeek() (ended int) {
	p := &r.peek
	if !p.held {
		return 0
	}
	p.held, p.peeking = false, false
	r.consumers[0].claims.Release(p.claim, p.claim.End)
	return 1
}
