package ringbuf

import (
	"errors"
	"os"
	"runtime"
	"time"
)

// The engine: every read style claims records here, reads them outside or
// inside the lock, releases them and publishes the consumer position, all
// under r.mu. Read and Peek claim one record, a Records loop a batch.
//
// A claim is a range of ring positions handed to one caller. Claims are
// made in ring order and released in any order; the consumer position,
// which tells the kernel what it may overwrite, advances only over a
// prefix of released claims, so the kernel never reuses what a view still
// shows. A caller that stops in the middle of its claim (a loop that
// breaks, a busy record) gives the rest back: un-claimed if nobody claimed
// after it, else marked returned and handed out again first.

type claimState uint8

const (
	claimHeld     claimState = iota // a caller is reading it
	claimReleased                   // read; its space may go back to the kernel
	claimReturned                   // unread; the next claim takes it
)

type claim struct {
	start, end uint64
	state      claimState
}

// claimQueue holds the claims between the consumer position and the claim
// position, oldest first. With one caller at a time it holds at most one
// claim, so every operation is O(1) on the same backing array.
type claimQueue struct {
	items    []claim
	head     int
	returned int // claims in state claimReturned
}

func (q *claimQueue) empty() bool { return q.head == len(q.items) }

func (q *claimQueue) push(c claim) {
	if q.empty() {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 32 && q.head > len(q.items)/2 {
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, c)
	if c.state == claimReturned {
		q.returned++
	}
}

// find returns the index of the claim that starts at start, or -1.
func (q *claimQueue) find(start uint64) int {
	for i := q.head; i < len(q.items); i++ {
		if q.items[i].start == start {
			return i
		}
	}
	return -1
}

// firstReturned returns the index of the oldest returned claim, or -1.
func (q *claimQueue) firstReturned() int {
	for i := q.head; q.returned > 0 && i < len(q.items); i++ {
		if q.items[i].state == claimReturned {
			return i
		}
	}
	return -1
}

// split cuts claim i at position at; the part from at on gets state rest.
func (q *claimQueue) split(i int, at uint64, rest claimState) {
	tail := claim{start: at, end: q.items[i].end, state: rest}
	q.items[i].end = at
	q.items = append(q.items, claim{})
	copy(q.items[i+2:], q.items[i+1:])
	q.items[i+1] = tail
	if rest == claimReturned {
		q.returned++
	}
}

// setState changes claim i's state, keeping the returned count.
func (q *claimQueue) setState(i int, state claimState) {
	if q.items[i].state == claimReturned {
		q.returned--
	}
	if state == claimReturned {
		q.returned++
	}
	q.items[i].state = state
}

// popReleased drops the released claims at the head and returns the end of
// the last one dropped, or ok false if the head is not released.
func (q *claimQueue) popReleased() (end uint64, ok bool) {
	for !q.empty() && q.items[q.head].state == claimReleased {
		end, ok = q.items[q.head].end, true
		q.head++
	}
	return end, ok
}

// scan walks the committed records in [pos, end): with one, up to and
// including the first that is not discarded; otherwise until budget bytes
// hold a record that is not. It stops before a busy record. next is where
// it stopped; recPos and recLen name the last record found, if ready.
func (r *Reader) scan(pos, end, budget uint64, one bool) (next, recPos uint64, recLen uint32, ready, busy bool, err error) {
	for next = pos; next < end; {
		h := r.ring.headerAt(next)
		if h.busy() {
			return next, recPos, recLen, ready, true, nil
		}
		total := h.total()
		if total > end-next {
			return next, recPos, recLen, ready, false, r.ring.corrupt(next, end, h)
		}
		if !h.discarded() {
			recPos, recLen, ready = next, h.length(), true
		}
		next += total
		if ready && (one || next-pos >= budget) {
			break
		}
	}
	return next, recPos, recLen, ready, false, nil
}

// claimLocked hands the caller the next records: with one, up to and
// including the next record that is not discarded, whose position and
// length it returns; otherwise a batch. Returned claims go first. A loop
// that reads alone claims all that is produced without a walk: the
// producer position is always on a record boundary, so the loop reads each
// header once, as it yields. Otherwise a batch stops after batchBytes, so
// other callers get their share. Discarded records met on the way are
// released. ok is false if nothing is ready; busy then says a producer is
// still writing the next record. With release, the claim is released as
// it is made: ReadInto copies the record before it lets go of mu, so
// nobody else sees the claim, and with no other claim before it the queue
// is left alone (BenchmarkRead mode=copy).
func (r *Reader) claimLocked(one, release bool) (c claim, recPos uint64, recLen uint32, ok, busy bool, err error) {
	if r.peekBatchLive {
		r.revokePeekLocked() // a peeker alone no longer
	}
	for r.err == nil {
		i := r.claims.firstReturned()
		var start, end, next uint64
		var ready bool
		if i >= 0 {
			start, end = r.claims.items[i].start, r.claims.items[i].end
			if !one {
				r.claims.setState(i, claimHeld)
				return r.claims.items[i], 0, 0, true, false, nil
			}
		} else {
			if r.claimPos == r.producerPos {
				producer, err := r.ring.loadProducer(r.consumerPos)
				if err != nil {
					r.err = err
					break
				}
				r.producerPos = producer
			}
			start, end = r.claimPos, r.producerPos
		}
		if !one && i < 0 && r.active == 1 && r.claims.empty() {
			next, ready = end, end > start
		} else {
			next, recPos, recLen, ready, busy, r.err = r.scan(start, end, r.batchBytes, one)
		}
		if next == start {
			break
		}
		state := claimHeld
		if release || !ready { // !ready: nothing but discarded records
			state = claimReleased
		}
		switch {
		case i >= 0:
			if next < end {
				r.claims.split(i, next, claimReturned)
			}
			r.claims.setState(i, state)
		case state == claimReleased && r.claims.empty():
			r.claimPos, r.consumerPos = next, next // nothing held before it
		default:
			r.claims.push(claim{start: start, end: next, state: state})
			r.claimPos = next
		}
		if state == claimReleased {
			r.advanceLocked()
		}
		if ready {
			return claim{start: start, end: next}, recPos, recLen, true, false, nil
		}
		if i < 0 {
			break
		}
	}
	return claim{}, 0, 0, false, busy, r.err
}

// releaseLocked ends claim c: the records before upTo were read, the rest
// go back to be claimed again.
func (r *Reader) releaseLocked(c claim, upTo uint64) {
	i := r.claims.find(c.start)
	r.giveBackLocked(i, upTo)
	if upTo > c.start {
		r.claims.setState(i, claimReleased)
	}
	r.advanceLocked()
	// Records committed while c was held woke nobody if they sat behind
	// it: the kernel wakes only a consumer that has caught up.
	r.wakeWaitersLocked()
}

// giveBackLocked hands the records of claim i from pos on back, to be
// claimed again: un-claimed if nobody claimed after it, else marked
// returned. Claim i keeps what is below pos; with nothing below, it is
// gone or returned whole.
func (r *Reader) giveBackLocked(i int, pos uint64) {
	c := r.claims.items[i]
	switch {
	case pos >= c.end:
	case c.end == r.claimPos: // the last claim
		r.claimPos = pos
		if pos == c.start {
			r.claims.items = r.claims.items[:i]
		} else {
			r.claims.items[i].end = pos
		}
	case pos == c.start:
		r.claims.setState(i, claimReturned)
	default:
		r.claims.split(i, pos, claimReturned)
	}
}

// releasePrefixLocked releases the part of held claim c below pos and
// returns the part still held.
func (r *Reader) releasePrefixLocked(c claim, pos uint64) claim {
	i := r.claims.find(c.start)
	r.claims.split(i, pos, claimHeld)
	r.claims.setState(i, claimReleased)
	r.advanceLocked()
	return claim{start: pos, end: c.end}
}

// advanceLocked moves the consumer position over released claims.
func (r *Reader) advanceLocked() {
	if end, ok := r.claims.popReleased(); ok {
		r.consumerPos = end
	}
}

// publishLocked tells the kernel how far this reader has consumed, while
// the consumer page is still mapped.
func (r *Reader) publishLocked() {
	if r.consumerPos != r.publishedPos && !r.released && r.res.mapping.consumerMapped() {
		r.ring.publishConsumer(r.consumerPos)
		r.publishedPos = r.consumerPos
	}
}

func (r *Reader) wakeWaitersLocked() {
	if r.waiters > 0 && !r.wakePending {
		r.wakeLocked()
	}
}

func (r *Reader) wakeLocked() {
	if r.res.poller != nil {
		if err := r.res.poller.Wake(); err == nil {
			r.wakePending = true
		}
	}
}

// takeReadyLocked claims and releases at once the record at the claim
// position, if it is committed and not discarded and no claim is out:
// ReadInto's common case, without the general claim's bookkeeping
// (BenchmarkRead mode=copy, 16 B: about a fifth slower than upstream's
// ReadInto through claimLocked alone).
func (r *Reader) takeReadyLocked() (pos uint64, length uint32, next uint64, ok bool) {
	pos = r.claimPos
	if pos == r.producerPos || !r.claims.empty() || r.peekBatchLive || r.err != nil {
		return 0, 0, 0, false
	}
	h := r.ring.headerAt(pos)
	if h.busy() || h.discarded() || h.total() > r.producerPos-pos {
		return 0, 0, 0, false
	}
	next = pos + h.total()
	r.claimPos, r.consumerPos = next, next
	return pos, h.length(), next, true
}

// heldClaimPoll bounds a wait while a claim pins the consumer position:
// the kernel wakes a reader only for a record at the position it knows, so
// records committed behind a held view wake nobody, and the claim's
// release may come late or never (a Peek view kept for long).
const heldClaimPoll = time.Millisecond

// busyBackoff is how long to wait the n-th time in a row for a record a
// producer is still writing (between reserve and submit; it may wake
// nobody, with BPF_RB_NO_WAKEUP): 0, for a yield, the first eight times,
// then doubling from 2 µs up to a millisecond, never past timeout (if not
// negative).
func busyBackoff(n int, timeout time.Duration) time.Duration {
	if n <= 8 {
		return 0
	}
	d := time.Microsecond << min(n-8, 10)
	if timeout >= 0 {
		d = min(d, timeout)
	}
	return d
}

// waitState is one read's or loop's state across waits.
type waitState struct {
	busyWaits int
}

// waitLocked publishes what was consumed, then waits for something to
// read, with mu held on entry and exit. It returns the error that ends the
// read: ErrClosed, a corrupt ring, ErrFlushed, os.ErrDeadlineExceeded;
// nil means look again.
func (r *Reader) waitLocked(op *waitState, busy bool) error {
	r.publishLocked()
	if r.err != nil && !r.closed {
		return r.err
	}
	timeout, err := r.timeoutLocked()
	if err != nil {
		return err
	}

	if busy {
		// Never holding mu: Close, SetDeadline and other reads need it.
		op.busyWaits++
		r.waiters++
		r.mu.Unlock()
		if d := busyBackoff(op.busyWaits, timeout); d == 0 {
			runtime.Gosched()
		} else {
			time.Sleep(d)
		}
		r.mu.Lock()
		r.waiters--
		return r.afterWaitLocked(nil)
	}
	op.busyWaits = 0

	// Records committed since the last claim may have woken nobody: look
	// once more before sleeping.
	producer, err := r.ring.loadProducer(r.consumerPos)
	if err != nil {
		r.err = err
		return err
	}
	if producer != r.claimPos || r.claims.returned > 0 {
		return nil
	}
	if r.consumerPos != r.claimPos && (timeout < 0 || timeout > heldClaimPoll) {
		timeout = heldClaimPoll
	}

	r.waiters++
	r.mu.Unlock()
	err = r.res.poller.Wait(timeout)
	r.mu.Lock()
	r.waiters--
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = nil // the next pass returns records first, then the deadline
	}
	return r.afterWaitLocked(err)
}

func (r *Reader) afterWaitLocked(err error) error {
	if r.waiters == 0 && r.wakePending && r.res.poller != nil && !r.closed {
		r.res.poller.Drain()
		r.wakePending = false
	}
	if r.closed {
		if relErr := r.releaseResourcesLocked(); relErr != nil {
			return errors.Join(ErrClosed, relErr)
		}
		return ErrClosed
	}
	return err
}

// claimOneLocked claims the next record that is not discarded for Read or
// Peek, waiting for one; with release, see claimLocked.
func (r *Reader) claimOneLocked(release bool) (c claim, pos uint64, length uint32, err error) {
	r.active++
	var op waitState
	for {
		c, pos, length, ok, busy, _ := r.claimLocked(true, release)
		if ok {
			r.active--
			return c, pos, length, nil
		}
		if err := r.waitLocked(&op, busy); err != nil {
			r.active--
			return claim{}, 0, 0, err
		}
	}
}
