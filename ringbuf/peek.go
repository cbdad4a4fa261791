package ringbuf

// Peek and Consume. A peeker alone on the Reader gets a fast path: when
// nobody else reads, its claim grows to a batch of everything produced,
// and Peek and Consume walk that batch without taking mu, as a Records
// loop walks its own; Consume still publishes before it returns. Anyone
// else who wants records (a Read, a Records loop, Close) revokes the batch
// first, under mu, and takes back what the peeker has not been handed.
//
// Peeker and revoker meet with two atomics each, in the order of Dekker's
// algorithm, so at least one of them sees the other:
//   - the peeker stores peekCursor (records below are handed out) before it
//     loads peekRevoked, and hands out nothing if it finds it set;
//   - Consume publishes the consumer position before it loads peekRevoked,
//     and settles with the revoker under mu if it finds it set;
//   - the revoker stores peekRevoked before it loads peekCursor and the
//     kernel's consumer position: what it reads there is the peeker's.
//
// BenchmarkRead mode=peek prices it: two lock round trips per record
// otherwise, against one publish.

// peekState is the peeking goroutine's own. Only it writes it, and it
// reads it without mu.
type peekState struct {
	held      bool // a view is handed out
	claim     claim
	pos       uint64
	length    uint32
	remaining int

	fast     bool   // the peeker believes its batch is live
	next     uint64 // in the batch, records below are consumed
	end      uint64 // the batch ends here
	producer uint64 // producer position when the batch was claimed
}

// Peek returns the next record without consuming it. See PeekInto.
func (r *Reader) Peek() (Record, error) {
	var rec Record
	err := r.PeekInto(&rec)
	return rec, err
}

// PeekInto sets rec to the next record without consuming it: RawSample
// aliases the ring, read-only, with its capacity equal to its length. The
// view is valid until Consume or Close. Peeking again before Consume
// returns the same record; Consume moves past it. A peeked record belongs
// to the peeking goroutine: Read and Records return the records after it.
// Peek, PeekInto and Consume serve one goroutine at a time. Like Read,
// PeekInto blocks until a record arrives, the deadline passes, Flush or
// Close is called.
func (r *Reader) PeekInto(rec *Record) error {
	p := &r.peek
	if !r.closedFlag.Load() && (p.held || p.fast && r.peekNextFast()) {
		r.peekView(rec)
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if p.fast {
		r.revokePeekLocked() // the peeker ends its own batch: busy record, or its end
		r.settlePeekLocked()
	}
	if !p.held {
		c, pos, length, err := r.claimOneLocked(false)
		if err != nil {
			return err
		}
		r.peek = peekState{held: true, claim: c, pos: pos, length: length, remaining: int(r.producerPos - c.end)}
		if !r.peekUser {
			r.peekUser = true
			r.users++
		}
		r.growPeekLocked()
		r.publishLocked() // discarded records skipped on the way
	}
	r.peekView(rec)
	return nil
}

func (r *Reader) peekView(rec *Record) {
	rec.RawSample = r.ring.sample(r.peek.pos, r.peek.length)
	rec.Remaining = r.peek.remaining
}

// growPeekLocked makes the peeker's claim a batch of everything produced
// when nobody else reads and no other claim is out.
func (r *Reader) growPeekLocked() {
	p := &r.peek
	if r.active != 0 || r.claims.head != len(r.claims.items)-1 || p.claim.end != r.claimPos {
		return
	}
	producer, err := r.ring.loadProducer(r.consumerPos)
	if err != nil || producer == r.claimPos {
		return
	}
	r.claims.items[r.claims.head].end, r.claimPos, r.producerPos = producer, producer, producer
	r.peekBatch, r.peekBatchLive = claim{start: p.claim.start, end: producer}, true
	r.peekCursor.Store(p.claim.end)
	r.peekRevoked.Store(false)
	p.fast, p.next, p.end, p.producer = true, p.claim.start, producer, producer
}

// peekNextFast hands out the next record of the peeker's batch without mu.
// It returns false where mu is needed: the batch is revoked or used up, or
// its next record is busy.
func (r *Reader) peekNextFast() bool {
	p, rg := &r.peek, r.ring
	for q := p.next; q < p.end; {
		h := rg.headerAt(q)
		total := h.total()
		if h.busy() || total > p.end-q {
			return false
		}
		next := q + total
		if h.discarded() {
			q = next
			continue
		}
		r.peekCursor.Store(next)
		if r.peekRevoked.Load() {
			return false
		}
		p.held, p.claim, p.pos, p.length = true, claim{start: p.next, end: next}, q, h.length()
		p.remaining = int(p.producer - next)
		return true
	}
	return false
}

// revokePeekLocked ends the peeker's batch: what it was not handed goes
// back, what it consumed is released, and a view it may hold stays held,
// in peekLeft, for the peeker to settle.
func (r *Reader) revokePeekLocked() {
	if !r.peekBatchLive {
		return
	}
	r.peekBatchLive = false
	r.peekRevoked.Store(true)
	b := r.peekBatch
	handed := r.peekCursor.Load()
	consumed := min(max(r.ring.loadConsumer(), b.start), handed)
	i := r.claims.find(b.start)
	r.giveBackLocked(i, handed)
	r.peekLeft = claim{start: consumed, end: handed}
	if consumed > b.start {
		if consumed < handed {
			r.claims.split(i, consumed, claimHeld)
		}
		r.claims.setState(i, claimReleased)
	}
	if consumed == handed { // no view: the peeker is done with the ring
		r.peekLeft = claim{}
		r.peekUser = false
		r.users--
	}
	r.advanceLocked()
	r.wakeWaitersLocked()
}

// settlePeekLocked brings the peeker's view of a revoked batch in line
// with what the revoker left: records the peeker consumed are released, a
// view it holds becomes an ordinary peek claim, and a record it set the
// cursor for but then did not hand out (it saw the revoke) goes back.
func (r *Reader) settlePeekLocked() {
	p := &r.peek
	if !p.fast || r.peekBatchLive {
		return
	}
	p.fast = false
	left := r.peekLeft
	r.peekLeft = claim{}
	if left.end > left.start {
		i := r.claims.find(left.start)
		mine := p.next // the peeker consumed or holds what is below
		if p.held {
			mine = p.claim.end
		}
		r.giveBackLocked(i, mine)
		switch {
		case mine == left.start:
		case !p.held:
			r.claims.setState(i, claimReleased)
		case p.claim.start > left.start:
			r.claims.split(i, p.claim.start, claimHeld)
			r.claims.setState(i, claimReleased)
		}
		r.advanceLocked()
		r.wakeWaitersLocked()
	}
	if !p.held && r.peekUser {
		r.peekUser = false
		r.users--
	}
	r.publishLocked()
	r.releaseResourcesLocked()
}

// Consume consumes the peeked record and ends its view; when it returns,
// the kernel knows the record's space is free. It returns ErrNotPeeked if
// no record is peeked, and ErrClosed after Close, when it releases the
// view without consuming.
func (r *Reader) Consume() error {
	p := &r.peek
	if p.held && p.fast && !r.closedFlag.Load() {
		p.held, p.next = false, p.claim.end
		r.ring.publishConsumer(p.next)
		if r.peekRevoked.Load() {
			r.mu.Lock()
			r.settlePeekLocked()
			r.mu.Unlock()
		}
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settlePeekLocked()
	if !p.held {
		if r.closed {
			return ErrClosed
		}
		return ErrNotPeeked
	}
	p.held = false
	r.peekUser = false
	r.users--
	if r.closed {
		if err := r.releaseResourcesLocked(); err != nil {
			return err
		}
		return ErrClosed
	}
	r.releaseLocked(p.claim, p.claim.end)
	r.publishLocked()
	return nil
}
