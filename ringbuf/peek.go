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
	mine := false // this call set peeking
	return r.engine.Read(func(int, bool) (readers.Take, error) {
		if !mine {
			if p.peeking {
				return readers.None, fmt.Errorf("ringbuf: %w", ErrConcurrentPeek)
			}
			p.peeking, mine = true, true
		}
		cl, pos, length, take, err := c.takeOne(true)
		if take == readers.Held {
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

// Consume consumes the peeked record and ends its view; when it returns,
// the kernel knows the record's space is free, also after Close. It
// returns [ErrNotPeeked] if no record is peeked ([ErrClosed] once closed).
func (r *Reader) Consume() error {
	p := &r.peek
	held := false
	err := r.engine.Release(0, func() int {
		if !p.held {
			return 0
		}
		held = true
		p.held, p.peeking = false, false
		r.consumers[0].claims.Release(p.claim, p.claim.End)
		return 1
	})
	switch {
	case held:
		return err
	case err != nil:
		return err // ErrClosed
	}
	return ErrNotPeeked
}
