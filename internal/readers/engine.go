package readers

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// Buffers is an Engine's view of its reader's buffers, by index, called
// with the engine's lock held, per claim and per wait, never per record.
type Buffers interface {
	Len() int
	Publish(i int) // tells the kernel buffer i's consumer position
	// Ready reports whether a claim on buffer i could take records: some
	// were given back, or produced past the claim position.
	Ready(i int) bool
	Err(i int) error // buffer i's sticky error, which ends reads
}

// Take is what a claim took from a buffer.
type Take uint8

// The Takes, in order: a claim took something from Copied on.
const (
	None   Take = iota // nothing was produced: the read waits
	Busy               // a producer still writes the next record: the read backs off
	Copied             // a record was read, consumed and published by the claim; nothing is held
	Held               // records are held outside the lock until Release; the buffers stay mapped
	Lent               // Held, as the buffer's oldest claim, given back without the lock (Loan)
)

// A Holder is what one loop or lease holds, called with the engine's lock
// held.
type Holder interface {
	// Claim holds records of buffer i; alone: no other read or loop is in
	// progress, so it may take all there is.
	Claim(i int, alone bool) (Take, error)
	// Release gives back what it holds and may give back now (all when
	// final: the loop or lease ends): which buffer, how many claims ended,
	// and stalled if it read nothing before a busy record.
	Release(final bool) (i, ended int, stalled bool)
}

// Engine is a reader but its buffers' layout: the lock, the waits, the
// readiness descriptor and the resources' lifetime (docs/architecture.md).
// Every method takes the lock; the functions it is given run with it held.
type Engine struct {
	mu            sync.Mutex
	wait          *epoll.Waiter
	poller        *epoll.Poller
	readiness     *epoll.Readiness // made by ReadinessFD; nil until then
	buffers       Buffers
	free          func() error
	cleanup       runtime.Cleanup // frees the resources of a reader nobody closed
	heldClaimPoll time.Duration
	n             int  // buffers.Len()
	turn          int  // the buffer the next claim looks at first
	held          int  // claims held outside the lock, lent ones included
	freed         bool // free ran
	loan          Loan // the claim lent, if one is out
}

// Init starts the engine on buffers, waiting on poller. flushed is the
// reader's ErrFlushed; free frees its resources once it is closed and
// nothing is held, or once Go collects the engine (so free must not refer
// to it); heldClaimPoll bounds a wait while a claim is held, for a kernel
// that wakes only a reader that caught up (zero: no bound).
func (e *Engine) Init(buffers Buffers, poller *epoll.Poller, flushed error, free func() error, heldClaimPoll time.Duration) {
	e.buffers, e.poller, e.free, e.heldClaimPoll = buffers, poller, free, heldClaimPoll
	e.n = buffers.Len()
	e.wait = epoll.NewWaiter(&e.mu, poller, flushed)
	// On the engine, not the reader: a loop may outlive the reader value.
	e.cleanup = runtime.AddCleanup(e, func(free func() error) { free() }, free)
}

// Session is one loop's or lease's place in the engine: inside it while
// it claims or waits, away while its caller's code runs.
type Session struct {
	ticket    epoll.Ticket
	busyWaits int
}

// Read is one read call: claim takes a record from buffer i, the buffers
// taking turns, waiting in between, until one takes something or the wait
// ends (Close, Flush, the deadline). A record Held is the caller's until
// Release. failed, if not nil, runs with the lock held when Read fails.
func (e *Engine) Read(claim func(i int, alone bool) (Take, error), failed func()) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.readLocked(claim, failed)
}

// readLocked is apart so that its common case, one buffer and a record to
// copy, takes no turns and begins no wait (BenchmarkRead, mode copy).
func (e *Engine) readLocked(claim func(i int, alone bool) (Take, error), failed func()) (err error) {
	take := None
	switch {
	case e.wait.Closed():
	case e.n == 1 && !e.loan.lent:
		if take, err = claim(0, e.wait.Active() == 0); take >= Held {
			e.heldLocked(0, take)
		}
	default:
		take, err = e.claimTurnLocked(claim, e.wait.Active() == 0)
	}
	if take < Copied && err == nil {
		err = e.waitToTakeLocked(claim)
	}
	if err != nil && failed != nil {
		failed()
	}
	e.settleLocked()
	return err
}

// waitToTakeLocked is Read with nothing to take yet.
func (e *Engine) waitToTakeLocked(claim func(i int, alone bool) (Take, error)) error {
	var s Session
	if err := e.wait.Begin(&s.ticket); err != nil {
		return err
	}
	defer e.wait.End(&s.ticket)
	return e.claimLocked(&s, claim, nil, false)
}

// claimLocked claims until claim takes something, waiting in between, or
// returns the error that ends the wait; stalled: the last claim met a
// busy record. h, if not nil, gives back what it may before a wait: the
// kernel wakes only a reader that caught up.
func (e *Engine) claimLocked(s *Session, claim func(i int, alone bool) (Take, error), h Holder, stalled bool) error {
	for {
		if e.wait.Closed() {
			return os.ErrClosed
		}
		if !stalled {
			take, err := e.claimTurnLocked(claim, e.wait.Active() == 1)
			if take >= Copied || err != nil {
				return err
			}
			if stalled = take == Busy; !stalled && h != nil {
				e.releaseHeldLocked(h, false)
			}
		}
		if err := e.waitLocked(s, stalled); err != nil {
			return err
		}
		stalled = false
	}
}

// claimTurnLocked runs claim on each buffer in turn until one takes
// something; a hold moves the turn past its buffer, so that buffers with
// records take turns.
func (e *Engine) claimTurnLocked(claim func(i int, alone bool) (Take, error), alone bool) (Take, error) {
	e.settleLoanLocked()
	n := e.n
	busy := false
	for k := range n {
		i := e.turn + k
		if i >= n {
			i -= n
		}
		if e.loan.lent && e.loan.buffer == i {
			e.callBackLocked(false) // the loan's end must publish what this takes
		}
		take, err := claim(i, alone)
		switch {
		case err != nil:
			return None, err
		case take == Copied:
			e.turn = i
			return take, nil
		case take >= Held:
			e.heldLocked(i, take)
			return take, nil
		case take == Busy:
			busy = true
		}
	}
	if busy {
		return Busy, nil
	}
	return None, nil
}

// heldLocked counts a claim of buffer i handed out to be held, lends it
// if Lent, and moves the turn past its buffer.
func (e *Engine) heldLocked(i int, take Take) {
	if take == Lent {
		e.loan.lend(i)
	}
	e.turn = i + 1
	if e.turn == e.n {
		e.turn = 0
	}
	e.held++
	if e.heldClaimPoll > 0 {
		// Records behind a held claim wake nobody: a sleeper with no
		// limit sleeps again with one.
		e.wait.WakeUnbounded()
	}
}

// Release gives back claims on buffer i held outside the lock: release
// ends them in the buffer's claims and says how many. The kernel is told,
// and a closed reader's resources are freed once nothing is held. With
// nothing ended it returns os.ErrClosed once closed.
func (e *Engine) Release(i int, release func() (ended int)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.settleLoanLocked()
	ended := release()
	if ended > 0 {
		e.releasedLocked(i, ended)
	}
	err := e.freeIfUnusedLocked()
	if ended == 0 && e.wait.Closed() {
		return errors.Join(os.ErrClosed, err)
	}
	return err
}

func (e *Engine) releasedLocked(i, ended int) {
	e.held -= ended
	if !e.freed {
		e.buffers.Publish(i)
	}
}

// Lender returns the engine's Loan, through which a claim that takes Lent
// is lent: release gives the claim back in its buffer's claims; returned
// reports whether the kernel has the claim's end from the holder.
func (e *Engine) Lender(release func() (ended int), returned func() bool) *Loan {
	l := &e.loan
	l.release, l.returned = release, returned
	l.out = ^uint64(0) // none out: BeginReturn fails
	return l
}

// Renew lends again, in place of a loan its holder took back and nothing
// settled since, the claim renew moves on to (Claims.Renew): one lock a
// claim, as a Read. It reports false, doing nothing, if the loan was
// settled or renew fails: then the holder Reads.
func (e *Engine) Renew(renew func() bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.loan.renew(renew)
}

// Returned is what a holder calls once it returned a loan the engine
// called back meanwhile (Return.CalledBack): the engine settles it now,
// and frees a closed reader's resources if it was the last held. A loan
// the engine settled already, and any loan since, are left as they are.
func (e *Engine) Returned() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.settleLoanLocked()
	return e.freeIfUnusedLocked()
}

// settleLoanLocked settles a loan its holder returned, and publishes past
// it.
func (e *Engine) settleLoanLocked() {
	if e.loan.lent {
		if i, ended, ok := e.loan.settle(); ok {
			e.releasedLocked(i, ended)
		}
	}
}

// callBackLocked is Loan.callBack, publishing past a loan it settles.
func (e *Engine) callBackLocked(stop bool) {
	if i, ended, ok := e.loan.callBack(stop); ok {
		e.releasedLocked(i, ended)
	}
}

// Loop is every iterator's loop: it claims through h and calls body
// without the lock until body returns false, or, the loop ended, with the
// error that ended it; however it stops, what h holds goes back.
func (e *Engine) Loop(h Holder, body func(err error) bool) {
	var s Session
	if err := e.Begin(&s); err != nil {
		body(err)
		return
	}
	ended := false // by Next, before the body gets the error
	defer func() {
		if !ended {
			e.End(&s, h)
		}
	}()
	for {
		if err := e.Next(&s, h, false); err != nil {
			ended = true
			body(err)
			return
		}
		if !body(nil) {
			return
		}
	}
}

// Begin starts a loop or lease, away in its caller's code until Next.
func (e *Engine) Begin(s *Session) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.wait.Begin(&s.ticket); err != nil {
		return err
	}
	e.wait.Away(&s.ticket)
	return nil
}

// Next brings s back into the reader for more: h gives back what it may
// (a lease claims first: its views outlive its claims), then it claims,
// waiting in between, and s goes away again with what it claimed. An
// error ends a loop, which has left the reader when its body gets it, so
// that Close waits for no body; a lease gives back all it holds and goes
// on.
func (e *Engine) Next(s *Session, h Holder, lease bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.wait.Back(&s.ticket)
	stalled := false
	if !lease {
		stalled = e.releaseHeldLocked(h, false)
	}
	return e.awayLocked(s, h, lease, e.claimLocked(s, h.Claim, h, stalled))
}

// BackOff is Next for a lease whose claim reached a record a producer
// still writes: it waits a little, keeping what it holds.
func (e *Engine) BackOff(s *Session, h Holder) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.wait.Back(&s.ticket)
	return e.awayLocked(s, h, true, e.waitLocked(s, true))
}

// awayLocked sends s back to its caller's code with err: a loop that
// failed ends, a lease gives back what it holds.
func (e *Engine) awayLocked(s *Session, h Holder, lease bool, err error) error {
	switch {
	case err == nil:
	case lease:
		e.releaseHeldLocked(h, true)
	default:
		e.endLocked(s, h)
		return err
	}
	e.wait.Away(&s.ticket)
	return err
}

// End ends a loop or lease that is away, giving back all that h holds.
func (e *Engine) End(s *Session, h Holder) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.endLocked(s, h)
}

// endLocked ends s, the ticket last: a Close waiting for it finds its
// work done.
func (e *Engine) endLocked(s *Session, h Holder) {
	e.releaseHeldLocked(h, true)
	e.publishAllLocked()
	e.freeIfUnusedLocked() // its error is Close's, not this caller's
	e.wait.End(&s.ticket)
}

// releaseHeldLocked gives back what h may, and reports whether it stalled.
func (e *Engine) releaseHeldLocked(h Holder, final bool) (stalled bool) {
	i, ended, stalled := h.Release(final)
	if ended > 0 {
		e.releasedLocked(i, ended)
	}
	return stalled
}

// waitLocked is called with nothing to claim: it publishes, then returns
// the error that ends the read, or sleeps and returns nil to look again.
// With busy it backs off: a yield eight times, then 2 µs doubling to 1 ms.
func (e *Engine) waitLocked(s *Session, busy bool) error {
	e.publishAllLocked()
	timeout, err := e.wait.Check(&s.ticket)
	if err != nil {
		return err
	}
	if busy {
		s.busyWaits++
		e.mu.Unlock()
		if s.busyWaits <= 8 {
			runtime.Gosched()
		} else if d := time.Microsecond << min(s.busyWaits-8, 10); timeout < 0 {
			time.Sleep(d)
		} else {
			time.Sleep(min(d, timeout))
		}
		e.mu.Lock()
		return nil
	}
	s.busyWaits = 0
	for i := range e.n {
		if e.buffers.Ready(i) {
			return nil // it may have woken nobody
		}
		if err := e.buffers.Err(i); err != nil {
			return err
		}
	}
	if e.held > 0 && e.heldClaimPoll > 0 && (timeout < 0 || timeout > e.heldClaimPoll) {
		timeout = e.heldClaimPoll
	}
	e.settleLocked() // the descriptor says what a read finds while this one sleeps
	e.wait.Sleep(timeout)
	if e.wait.Closed() {
		return errors.Join(os.ErrClosed, e.freeIfUnusedLocked())
	}
	return nil
}

func (e *Engine) publishAllLocked() {
	if e.freed {
		return
	}
	e.settleLoanLocked()
	for i := range e.n {
		e.buffers.Publish(i)
	}
}

// settleLocked ends every operation and keeps the engine's one rule
// (docs/architecture.md, "Settle"): if a read would take records or end
// with an error at once, a sleeper is woken and the readiness descriptor
// is readable; else it is not, and while claims are held the watcher
// looks again every heldClaimPoll.
func (e *Engine) settleLocked() {
	if e.readiness != nil || !e.wait.Idle() {
		e.settleAllLocked()
	}
}

// settleAllLocked is settleLocked with a sleeper or a descriptor to tell.
func (e *Engine) settleAllLocked() {
	e.settleLoanLocked()
	ready := false
	for i := range e.n {
		if e.buffers.Ready(i) || e.buffers.Err(i) != nil {
			ready = true
			break
		}
	}
	if ready && !e.wait.Idle() {
		e.wait.Wake()
	}
	if e.readiness == nil {
		return
	}
	readable := ready || e.wait.Closed() || e.wait.FlushPending()
	e.readiness.Set(readable) // an error is a lost wake-up, which the next operation mends
	if !readable && e.held > 0 && e.heldClaimPoll > 0 {
		e.readiness.PollIn(e.heldClaimPoll)
	}
}

// ReadinessFD is every reader's ReadinessFD, made on the first call;
// os.ErrClosed once closed.
func (e *Engine) ReadinessFD() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() {
		return -1, os.ErrClosed
	}
	if e.readiness == nil {
		// Weakly, so that a reader nobody closed is still collected.
		engine := weak.Make(e)
		rd, err := e.poller.NewReadiness(func() bool {
			e := engine.Value()
			return e != nil && e.watched()
		})
		if err != nil {
			return -1, err
		}
		e.readiness = rd
		e.callBackLocked(true) // a lent claim's end shows what follows it
		e.settleLocked()
	}
	return e.readiness.FD(), nil
}

// watched is the readiness watcher's call-back; it reports whether to go
// on.
func (e *Engine) watched() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.freed {
		return false
	}
	e.settleLocked()
	return true
}

// Inspect runs look with the lock held while the reader is open, else
// returns os.ErrClosed.
func (e *Engine) Inspect(look func()) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() || e.freed {
		return os.ErrClosed
	}
	e.settleLoanLocked()
	look()
	return nil
}

// InProgress returns how many reads, loops and leases are in progress.
func (e *Engine) InProgress() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.wait.Active()
}

// freeIfUnusedLocked frees a closed engine's resources once nothing is
// held and nobody sleeps.
func (e *Engine) freeIfUnusedLocked() error {
	if !e.wait.Closed() || e.freed || e.held > 0 || !e.wait.Idle() {
		return nil
	}
	e.freed, e.readiness = true, nil // free closes the poller, and so the readiness
	e.cleanup.Stop()
	return e.free()
}

// SetDeadline is every reader's SetDeadline.
func (e *Engine) SetDeadline(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wait.SetDeadline(t)
}

// Flush is every reader's Flush (epoll.Waiter.Flush).
func (e *Engine) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	return e.wait.Flush()
}

// Close is every reader's Close; stop, if not nil, runs first. It returns
// once every blocked read has returned and every waiting loop has handed
// its body ErrClosed (epoll.Waiter.Close). The resources are freed then,
// or once the last claim held is given back.
func (e *Engine) Close(stop func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() {
		return nil
	}
	e.callBackLocked(true) // the loan's end frees the buffers
	e.publishAllLocked()
	var err error
	if stop != nil {
		err = stop()
	}
	e.wait.Close()
	e.settleLocked() // readable: a read returns ErrClosed
	return errors.Join(err, e.freeIfUnusedLocked())
}
