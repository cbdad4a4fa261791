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
// under its lock per claim and per wait; Ready and Err also per operation
// while someone sleeps or a readiness descriptor is out.
type Buffers interface {
	Len() int
	Publish(i int)    // tells the kernel buffer i's consumer position
	Ready(i int) bool // whether a claim on buffer i could take records
	Err(i int) error  // buffer i's sticky error, which ends reads
}

// Take is what a claim took from a buffer.
type Take uint8

// The Takes, in order: from Copied on, a claim took something.
const (
	None       Take = iota // nothing was produced: the read waits
	Busy                   // a producer still writes the next record: the read backs off
	Copied                 // a record was read, consumed and published by the claim; nothing is held
	CopiedLast             // Copied, the last of what the claim had found: the next read looks at the other buffers first
	Held                   // records are held outside the lock until Release; the buffers stay mapped
	Lent                   // Held, as the buffer's oldest claim, given back without the lock (Loan)
)

// A Holder is what one loop or lease holds, called under the engine's lock.
type Holder interface {
	// Claim holds records of buffer i; alone: no other read or loop is in
	// progress, so it may take all there is.
	Claim(i int, alone bool) (Take, error)
	// Release gives back what it may (all if final): which buffer, how many
	// claims ended, and stalled if it read nothing before a busy record.
	Release(final bool) (i, ended int, stalled bool)
}

// Engine is a reader but its buffers' layout: the lock, the waits, the
// readiness descriptor and the resources' lifetime (docs/architecture.md).
// Every method but Lender, called before first use, takes the lock; the
// functions a method is given run with it held.
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

// Init starts the engine on buffers and poller. free frees the reader's
// resources once it is closed and nothing is held, or once Go collects the
// engine, so it must not refer to it; heldClaimPoll bounds a wait while a
// claim is held (zero: no bound).
func (e *Engine) Init(buffers Buffers, poller *epoll.Poller, flushed error, free func() error, heldClaimPoll time.Duration) {
	e.buffers, e.poller, e.free, e.heldClaimPoll = buffers, poller, free, heldClaimPoll
	e.n = buffers.Len()
	e.wait = epoll.NewWaiter(&e.mu, poller, flushed)
	// On the engine, not the reader: a loop may outlive the reader value.
	e.cleanup = runtime.AddCleanup(e, func(free func() error) { free() }, free)
}

// Session is one loop's or lease's place in the engine.
type Session struct {
	ticket    epoll.Ticket
	busyWaits int
}

// Read runs claim on the buffers in turn, waiting in between, until one
// takes something or the wait ends. claim publishes a record it Copied; a
// record Held is the caller's until Release. failed, if not nil, runs under
// the lock when Read fails.
func (e *Engine) Read(claim func(i int, alone bool) (Take, error), failed func()) (err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	// One buffer and a record to copy: no turns, no wait (BenchmarkRead,
	// mode copy).
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

func (e *Engine) waitToTakeLocked(claim func(i int, alone bool) (Take, error)) error {
	var s Session
	if err := e.wait.Begin(&s.ticket); err != nil {
		return err
	}
	defer e.wait.End(&s.ticket)
	return e.claimLocked(&s, claim, nil, false)
}

// claimLocked claims until claim takes something or the wait ends; stalled:
// the last claim met a busy record. h, if any, gives back what it may
// before a wait: the kernel wakes only a reader that caught up.
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
		case take >= Held:
			e.heldLocked(i, take)
			return take, nil
		case take == CopiedLast: // a producer that keeps ahead keeps no buffer waiting
			e.turnPast(i)
			return take, nil
		case take == Copied:
			e.turn = i
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

func (e *Engine) heldLocked(i int, take Take) {
	if take == Lent {
		e.loan.lend(i)
	}
	e.turnPast(i)
	e.held++
	if e.heldClaimPoll > 0 {
		// Records behind a held claim wake nobody: a sleeper with no limit
		// sleeps again with one.
		e.wait.WakeUnbounded()
	}
}

// turnPast has the next claim look at buffer i last.
func (e *Engine) turnPast(i int) {
	e.turn = i + 1
	if e.turn == e.n {
		e.turn = 0
	}
}

// Release runs release, which ends claims of buffer i and says how many,
// and publishes. With nothing ended it returns os.ErrClosed once closed.
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

// Lender returns the Loan through which a claim that takes Lent is lent:
// release ends the claim; returned reports whether its end is published.
func (e *Engine) Lender(release func() (ended int), returned func() bool) *Loan {
	l := &e.loan
	l.release, l.returned = release, returned
	l.out = ^uint64(0) // none out: BeginReturn fails
	return l
}

// Renew lends again a loan its holder took back, not yet settled, on the
// claim renew moves it to; it reports false if it did not (then Read).
// renew must not panic: it runs under the lock with no defer, as it is
// PeekInto's every call (docs/batch-walk.md).
func (e *Engine) Renew(renew func() bool) bool {
	e.mu.Lock()
	ok := e.loan.renew(renew)
	e.mu.Unlock()
	return ok
}

// Returned settles a loan its holder returned after the engine called it
// back ([Return.CalledBack]), and frees a closed reader's resources if it
// was the last claim held.
func (e *Engine) Returned() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.settleLoanLocked()
	return e.freeIfUnusedLocked()
}

func (e *Engine) settleLoanLocked() {
	if e.loan.lent {
		if i, ended, ok := e.loan.settle(); ok {
			e.releasedLocked(i, ended)
		}
	}
}

func (e *Engine) callBackLocked(stop bool) {
	if i, ended, ok := e.loan.callBack(stop); ok {
		e.releasedLocked(i, ended)
	}
}

// Loop claims through h and calls body without the lock until it returns
// false, or with the error that ended the loop; what h holds goes back.
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

// Next claims more for s, waiting in between; but for a lease, whose views
// outlive its claims, h first gives back what it may. An error ends a loop,
// before its body gets it, so that Close waits for no body; a lease gives
// back all it holds and goes on.
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

// BackOff waits a little for a lease at a busy record, keeping its claims.
func (e *Engine) BackOff(s *Session, h Holder) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.wait.Back(&s.ticket)
	return e.awayLocked(s, h, true, e.waitLocked(s, true))
}

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

// End ends a loop or lease that is away, giving back all h holds.
func (e *Engine) End(s *Session, h Holder) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	e.endLocked(s, h)
}

// endLocked ends the ticket last: a Close waiting finds the work done.
func (e *Engine) endLocked(s *Session, h Holder) {
	e.releaseHeldLocked(h, true)
	e.publishAllLocked()
	e.freeIfUnusedLocked() // its error is Close's, not this caller's
	e.wait.End(&s.ticket)
}

func (e *Engine) releaseHeldLocked(h Holder, final bool) (stalled bool) {
	i, ended, stalled := h.Release(final)
	if ended > 0 {
		e.releasedLocked(i, ended)
	}
	return stalled
}

// waitLocked publishes, then returns the error that ends the read, or
// sleeps and returns nil. The busy back-off is not tuned: a record is busy
// only while its producer writes it.
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
	if ready, err := e.scanLocked(); ready || err != nil {
		return err // ready: it may have woken nobody
	}
	if e.held > 0 && e.heldClaimPoll > 0 && (timeout < 0 || timeout > e.heldClaimPoll) {
		timeout = e.heldClaimPoll
	}
	e.settleLocked() // the descriptor says what a read finds while this one sleeps
	e.wait.Sleep(timeout)
	if e.wait.Closed() {
		// Freed before the last blocked read returns: its caller may see
		// Close return (a second Close returns at once) and expects the
		// ring unmapped (TestCloseUnblocks). An error doing so is this
		// read's.
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

// settleLocked ends every operation (docs/architecture.md, "Settle").
func (e *Engine) settleLocked() {
	if e.readiness != nil || !e.wait.Idle() {
		e.settleAllLocked()
	}
}

func (e *Engine) settleAllLocked() {
	e.settleLoanLocked()
	ready, err := e.scanLocked()
	ready = ready || err != nil
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

// scanLocked reports whether a claim would take records, or the error a
// buffer holds. It looks from buffer 0 on: starting at the turn instead
// (one look, not n, with a busy high CPU) failed TestReadinessModel for
// perf under TCG in 4 of 8 kernel runs, 0 of 8 from 0; why is not known.
func (e *Engine) scanLocked() (ready bool, err error) {
	for i := range e.n {
		if e.buffers.Ready(i) {
			return true, nil
		}
		if err := e.buffers.Err(i); err != nil {
			return false, err
		}
	}
	return false, nil
}

// ReadinessFD is every reader's ReadinessFD.
func (e *Engine) ReadinessFD() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() {
		return -1, os.ErrClosed
	}
	if e.readiness == nil {
		engine := weak.Make(e) // so that a reader nobody closed is still collected
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

func (e *Engine) watched() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.freed {
		return false
	}
	e.settleLocked()
	return true
}

// Inspect runs look under the lock while the reader is open, else returns
// os.ErrClosed, and settles: look may change what a read finds (perf's
// Pause and Resume).
func (e *Engine) Inspect(look func()) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() || e.freed {
		return os.ErrClosed
	}
	e.settleLoanLocked()
	look()
	e.settleLocked()
	return nil
}

// InProgress returns how many reads, loops and leases are in progress.
func (e *Engine) InProgress() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.wait.Active()
}

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

// Flush is every reader's Flush.
func (e *Engine) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.settleLocked()
	return e.wait.Flush()
}

// Close is every reader's Close; stop, if not nil, runs first. The
// resources are freed once the last claim held is given back.
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
