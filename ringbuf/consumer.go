package ringbuf

import "github.com/ebpf-zc/ebpf/internal/readers"

// consumer is one ring's consumer side: the claims of its records
// (readers.Claims says what a claim is) and what the kernel was told.
// Every read style takes records through it, under its reader's mutex.
type consumer struct {
	ring         *ring
	claims       readers.Claims
	producerPos  uint64 // producer position last loaded
	publishedPos uint64 // consumer position the kernel has from us
	batchBytes   uint64 // how much a loop reads between two visits to the mutex
	err          error  // sticky: a corrupt ring stays corrupt
}

type claim = readers.Claim

func newConsumer(rg *ring, pos uint64) consumer {
	return consumer{
		ring:         rg,
		claims:       readers.NewClaims(pos),
		producerPos:  pos,
		publishedPos: pos,
		batchBytes:   min(rg.size/8, maxUnpublished),
	}
}

// publish tells the kernel the consumer position.
func (c *consumer) publish() {
	if pos := c.claims.ConsumerPos(); pos != c.publishedPos {
		c.ring.publishConsumer(pos)
		c.publishedPos = pos
	}
}

// produced reports whether records lie past the claim position, loading
// the producer position if the last one loaded is used up. It records a
// corrupt position as the consumer's error.
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

// ready reports whether a claim could find records: returned ones, or
// records produced since the last claim, which may have woken nobody.
func (c *consumer) ready() bool {
	return c.claims.HasReturned() || c.produced()
}

// readyRecord finds the record at the claim position if no claim is out
// and it is committed and kept: the common case of ReadInto and PeekInto,
// which then skip claimOne's scan and its wait and cost what upstream's
// ReadInto does (BenchmarkRead mode=copy, mode=peek). With no claim out,
// nothing below the claim position is unpublished. end is where the
// record's space ends; the caller claims up to it.
func (c *consumer) readyRecord() (pos, end uint64, length uint32, ok bool) {
	pos = c.claims.Pos()
	if !c.claims.Empty() || !c.produced() {
		return 0, 0, 0, false
	}
	h := c.ring.headerAt(pos)
	if h.busy() || h.discarded() || h.total() > c.producerPos-pos {
		return 0, 0, 0, false
	}
	return pos, pos + h.total(), h.length(), true
}

// scan walks the committed records in [pos, end): with one, up to and
// including the first that is kept (not discarded); otherwise until budget
// bytes hold a kept record. It stops before a busy record and at a corrupt
// one, which it records. next is where it stopped; recPos and recLen name
// the last kept record, if found.
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

// claimOne claims the next kept record for Read or Peek: the claim runs
// from the first unread position to the end of that record, discarded
// records before it included. With hold, the caller holds the claim until
// it releases it; without, the record is released as it is claimed (the
// caller copies it before it lets go of the mutex). ok is false if no
// record is ready; busy then says a producer is still writing the next.
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

// claimBatch claims records for a loop: a returned claim whole, else the
// records at the claim position. A loop that reads alone takes all that
// is produced without a walk (the producer position is always a record
// boundary); otherwise the claim stops past batchBytes, so others get
// their share.
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
