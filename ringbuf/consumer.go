package ringbuf

import "github.com/ebpf-zc/ebpf/internal/readers"

type claim = readers.Claim

// consumer is one ring's claims and what the kernel was told of them.
type consumer struct {
	ring         *ring
	claims       readers.Claims
	producerPos  uint64 // producer position last loaded
	publishedPos uint64 // consumer position the kernel has from us
	batchBytes   uint64
	err          error // sticky
}

func newConsumer(rg *ring, pos uint64) consumer {
	return consumer{
		ring:         rg,
		claims:       readers.NewClaims(pos),
		producerPos:  pos,
		publishedPos: pos,
		batchBytes:   readers.BatchBytes(rg.size),
	}
}

func (c *consumer) publish() {
	if pos := c.claims.ConsumerPos(); pos != c.publishedPos {
		c.ring.publishConsumer(pos)
		c.publishedPos = pos
	}
}

// produced reports whether records lie past the claim position, loading
// the producer position once the last is used up (a corrupt one: c.err).
func (c *consumer) produced() bool {
	if c.claims.Pos() == c.producerPos && c.err == nil {
		producer, err := c.ring.loadProducer(c.claims.ConsumerPos())
		if err != nil {
			c.err = err
			return false
		}
		c.producerPos = producer
	}
	return c.claims.Pos() != c.producerPos
}

func (c *consumer) ready() bool {
	return c.claims.HasReturned() || c.produced()
}

// takeOne takes the next kept record and the discarded ones before it,
// held if hold, else consumed (copied under the lock): cl is the claim,
// pos and length the record's.
func (c *consumer) takeOne(hold bool) (cl claim, pos uint64, length uint32, take readers.Take, err error) {
	if c.err != nil {
		return claim{}, 0, 0, readers.None, c.err
	}
	if pos, h, ok := c.readyRecord(); ok {
		cl = claim{Start: pos, End: pos + h.total()}
		if hold {
			c.claims.Hold(cl.End)
			return cl, pos, h.length(), readers.Held, nil
		}
		c.claims.Skip(cl.End)
		return cl, pos, h.length(), readers.Copied, nil
	}
	cl, pos, length, ok, busy := c.claimOne(hold)
	switch {
	case ok && hold:
		return cl, pos, length, readers.Held, nil
	case ok:
		return cl, pos, length, readers.Copied, nil
	case c.err != nil:
		return claim{}, 0, 0, readers.None, c.err
	case busy:
		return claim{}, 0, 0, readers.Busy, nil
	}
	return claim{}, 0, 0, readers.None, nil
}

// readyRecord finds the committed, kept record at the claim position if
// no claim is out: takeOne's common case, without claimOne's scan.
func (c *consumer) readyRecord() (pos uint64, h header, ok bool) {
	pos = c.claims.Pos()
	if !c.claims.Empty() || pos == c.producerPos {
		return pos, 0, false // the producer position is refreshed on the slow path
	}
	h = c.ring.headerAt(pos)
	return pos, h, h&(busyBit|discardBit) == 0 && h.total() <= c.producerPos-pos
}

// scan walks [pos, end) to the first kept record (one), or until budget
// bytes hold one; it stops before a busy record and at a corrupt one
// (c.err). recPos and recLen name the last kept one.
func (c *consumer) scan(pos, end, budget uint64, one bool) (next, recPos uint64, recLen uint32, found, busy bool) {
	for next = pos; next < end; {
		h := c.ring.headerAt(next)
		if h.busy() {
			return next, recPos, recLen, found, true
		}
		total := h.total()
		if total > end-next {
			c.err = c.ring.corrupt(next, end, h)
			return next, recPos, recLen, found, false
		}
		if !h.discarded() {
			recPos, recLen, found = next, h.length(), true
		}
		next += total
		if found && (one || next-pos >= budget) {
			break
		}
	}
	return next, recPos, recLen, found, false
}

// claimOne is takeOne past a claim: returned records first.
func (c *consumer) claimOne(hold bool) (cl claim, recPos uint64, recLen uint32, ok, busy bool) {
	for r, some := c.claims.Returned(); some; r, some = c.claims.Returned() {
		next, pos, length, found, busy := c.scan(r.Start, r.End, 0, true)
		if next > r.Start {
			cl = c.claims.Take(r.Start, next, hold && found)
		}
		if found {
			return cl, pos, length, true, false
		}
		if next < r.End { // busy or corrupt
			return claim{}, 0, 0, false, busy
		}
	}
	if !c.produced() {
		return claim{}, 0, 0, false, false
	}
	next, pos, length, found, busy := c.scan(c.claims.Pos(), c.producerPos, 0, true)
	switch {
	case !found:
		c.claims.Skip(next) // discarded records before a busy one
		return claim{}, 0, 0, false, busy
	case hold:
		cl = c.claims.Hold(next)
	default:
		cl = claim{Start: c.claims.Pos(), End: next}
		c.claims.Skip(next)
	}
	return cl, pos, length, true, false
}

// claimBatch claims a returned claim whole, else what is produced, up to
// batchBytes unless alone.
func (c *consumer) claimBatch(alone bool) (cl claim, ok, busy bool) {
	if r, some := c.claims.Returned(); some {
		return c.claims.Take(r.Start, r.End, true), true, false
	}
	if !c.produced() {
		return claim{}, false, false
	}
	next := c.producerPos
	if !alone {
		start := c.claims.Pos()
		next, _, _, _, busy = c.scan(start, next, c.batchBytes, false)
		if next == start {
			return claim{}, false, busy
		}
	}
	return c.claims.Hold(next), true, false
}
