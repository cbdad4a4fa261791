package ringbuf

import "slices"

// consumer is one ring's consumer side: which records were handed out,
// which of those are still held, and what the kernel was told. Every read
// style takes records through it, under its reader's mutex.
//
// A claim is a range of records handed to one caller (a read, a peek, a
// loop's batch). Claims are made in ring order at claimPos and end in any
// order. A claim that ends early gives its unread rest back: claimPos
// moves back over it if nothing was claimed after it, else it stays in
// the list, returned, and the next claimer takes it first. The consumer
// position is derived: the start of the oldest claim, or claimPos if none
// is out, so the kernel never reuses space that a caller still reads.
type consumer struct {
	ring         *ring
	claimPos     uint64 // records below were handed out, or skipped
	producerPos  uint64 // producer position last loaded
	publishedPos uint64 // consumer position the kernel has from us
	batchBytes   uint64 // how much a loop reads between two visits to the mutex
	claims       []claim
	returned     int   // claims given back unread
	err          error // sticky: a corrupt ring stays corrupt
}

// claim is a range of records [start, end) handed out and not yet
// released, or given back unread (returned).
type claim struct {
	start, end uint64
	returned   bool
}

func newConsumer(rg *ring, pos uint64) consumer {
	return consumer{
		ring:         rg,
		claimPos:     pos,
		producerPos:  pos,
		publishedPos: pos,
		batchBytes:   min(rg.size/8, maxUnpublished),
	}
}

// consumerPos is the position below which this reader has consumed all.
func (c *consumer) consumerPos() uint64 {
	if len(c.claims) > 0 {
		return c.claims[0].start
	}
	return c.claimPos
}

// publish tells the kernel the consumer position.
func (c *consumer) publish() {
	if pos := c.consumerPos(); pos != c.publishedPos {
		c.ring.publishConsumer(pos)
		c.publishedPos = pos
	}
}

// publishDue publishes once a batch of consumed space has piled up.
func (c *consumer) publishDue() {
	if c.consumerPos()-c.publishedPos >= c.batchBytes {
		c.publish()
	}
}

// produced reports whether records lie past claimPos, loading the producer
// position if the last one loaded is used up. It records a corrupt
// position as the consumer's error.
func (c *consumer) produced() bool {
	if c.claimPos == c.producerPos && c.err == nil {
		producer, err := c.ring.loadProducer(c.consumerPos())
		if err != nil {
			c.err = err
			return false
		}
		c.producerPos = producer
	}
	return c.claimPos != c.producerPos
}

// ready reports whether a claim could find records: returned ones, or
// records produced since the last claim, which may have woken nobody.
func (c *consumer) ready() bool {
	return c.returned > 0 || c.produced()
}

// takeReady hands out and releases at once the record at claimPos if it
// is committed and kept and no claim is out: ReadInto's common case, which
// then costs what upstream's ReadInto does (BenchmarkRead mode=copy).
func (c *consumer) takeReady() (pos uint64, length uint32, ok bool) {
	pos = c.claimPos
	if len(c.claims) != 0 || !c.produced() {
		return 0, 0, false
	}
	h := c.ring.headerAt(pos)
	if h.busy() || h.discarded() || h.total() > c.producerPos-pos {
		return 0, 0, false
	}
	c.claimPos = pos + h.total()
	return pos, h.length(), true
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
	for i := c.firstReturned(); i >= 0; i = c.firstReturned() {
		r := c.claims[i]
		next, pos, length, found, busy := c.scan(r.start, r.end, 0, true)
		if next > r.start {
			c.take(i, next, hold && found)
		}
		if found {
			return claim{start: r.start, end: next}, pos, length, true, false
		}
		if next < r.end { // busy or corrupt
			return claim{}, 0, 0, false, busy
		}
	}
	if !c.produced() {
		return claim{}, 0, 0, false, false
	}
	start := c.claimPos
	next, pos, length, found, busy := c.scan(start, c.producerPos, 0, true)
	c.claimPos = next // discarded records before a busy one are skipped
	if !found {
		return claim{}, 0, 0, false, busy
	}
	cl = claim{start: start, end: next}
	if hold {
		c.claims = append(c.claims, cl)
	}
	return cl, pos, length, true, false
}

// claimBatch claims records for a loop: a returned claim whole, else the
// records at claimPos. A loop that reads alone takes all that is produced
// without a walk (the producer position is always a record boundary);
// otherwise the claim stops past batchBytes, so others get their share.
func (c *consumer) claimBatch(alone bool) (cl claim, ok, busy bool) {
	if i := c.firstReturned(); i >= 0 {
		c.claims[i].returned = false
		c.returned--
		return c.claims[i], true, false
	}
	if !c.produced() {
		return claim{}, false, false
	}
	start, next := c.claimPos, c.producerPos
	if !alone {
		next, _, _, _, busy = c.scan(start, next, c.batchBytes, false)
		if next == start {
			return claim{}, false, busy
		}
	}
	cl = claim{start: start, end: next}
	c.claims = append(c.claims, cl)
	c.claimPos = next
	return cl, true, false
}

// firstReturned returns the index of the oldest returned claim, or -1.
func (c *consumer) firstReturned() int {
	if c.returned == 0 {
		return -1
	}
	for i := range c.claims {
		if c.claims[i].returned {
			return i
		}
	}
	return -1
}

// take hands out the first part of returned claim i, up to pos: held if
// hold, else released at once. The rest stays returned.
func (c *consumer) take(i int, pos uint64, hold bool) {
	r := c.claims[i]
	switch {
	case pos == r.end && hold:
		c.claims[i].returned = false
		c.returned--
	case pos == r.end:
		c.remove(i)
	case hold:
		c.claims[i].start = pos
		c.claims = slices.Insert(c.claims, i, claim{start: r.start, end: pos})
	default:
		c.claims[i].start = pos
	}
}

// release ends the claim that starts at cl.start: the records below upTo
// were read, the rest is given back. It reports whether records were given
// back, for the caller to wake those who wait for them.
func (c *consumer) release(cl claim, upTo uint64) (gaveBack bool) {
	i := 0
	for i < len(c.claims) && (c.claims[i].start != cl.start || c.claims[i].returned) {
		i++
	}
	end := c.claims[i].end
	switch {
	case upTo >= end:
		c.remove(i)
		return false
	case end == c.claimPos && i == len(c.claims)-1:
		c.claimPos = upTo // nothing was claimed after it
		c.remove(i)
	default:
		c.claims[i] = claim{start: upTo, end: end, returned: true}
		c.returned++
	}
	return true
}

// remove drops claim i, whose records are read.
func (c *consumer) remove(i int) {
	if c.claims[i].returned {
		c.returned--
	}
	c.claims = slices.Delete(c.claims, i, i+1)
}
