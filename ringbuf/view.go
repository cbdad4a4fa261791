package ringbuf

import "unsafe"

// view is the Reader's Peek view, under the engine's lock but for
// Consume's reads when it returns a view lent (readers.Loan).
type view struct {
	peeking bool   // a PeekInto is in progress, or its view is held
	held    bool   // PeekInto handed out a view not yet consumed
	claim   claim  // the view's
	lines   uint32 // what the stream loads read, kept (stream.go)
}

// renew is PeekInto's common case, under the engine's lock: Consume
// returned the last view without the lock (the kernel has its end), and
// the next record of c is committed: the view's claim moves on to it
// (readers.Engine.Renew).
func (v *view) renew(c *consumer, rec *Record) bool {
	pos := v.claim.End
	if pos == c.producerPos || !v.returned(c) {
		return false // the producer position is loaded on the slow path
	}
	h := c.ring.headerAt(pos)
	if h&(busyBit|discardBit) != 0 || h.total() > c.producerPos-pos {
		return false
	}
	cl, ok := c.claims.Renew(v.claim, pos+h.total())
	if !ok {
		return false
	}
	c.publishedPos = pos // Consume published it
	v.claim, v.held, v.peeking = cl, true, true
	v.lines = c.ring.loadLines(pos, h.total(), streamMax)
	rec.RawSample = c.ring.sample(pos, h.length())
	rec.Remaining = int(c.producerPos - cl.End)
	return true
}

// returned reports whether the kernel has the lent view's end, from
// Consume (readers.Loan).
func (v *view) returned(c *consumer) bool {
	end := v.claim.End
	return int64(c.ring.consumerPos.load(end)-end) >= 0
}

// release ends the view, if one is held, in c's claims, under the
// engine's lock.
func (v *view) release(c *consumer) (ended int) {
	if !v.held {
		return 0
	}
	v.held, v.peeking = false, false
	c.claims.Release(v.claim, v.claim.End)
	return 1
}

// A Peek view's record is read whole (loadLines), header included, when
// it spans more than two cache lines and at most streamMax bytes, so that
// a caller reading heads alone still reads the ring as a stream: PeekInto
// holds the lock and a compare-and-swap waits for every load, so it has
// one miss in flight at a time, and the heads of records more than two
// lines apart are lines the prefetcher skips (BenchmarkRead, mode=peek,
// touch=head, 256 B: +51 %; the zero-copy proposal's program, 512 B:
// +30 %; docs/batch-walk.md).
const (
	streamMin = 2 * 64
	streamMax = 512 + headerSize
)

// loadLines loads a word of each cache line after the header's of the
// record at pos, total bytes long, if streamMin < total <= max, and
// returns them ORed for the caller to keep, or they are compiled away
// (why: docs/batch-walk.md, "Measurements behind the read styles' design").
func (a dataArea) loadLines(pos, total, max uint64) (kept uint32) {
	if total > streamMin && total <= max {
		for off := uint64(64); off < total; off += 64 {
			kept |= *(*uint32)(unsafe.Add(a.data, (pos+off)&a.mask))
		}
	}
	return kept
}
