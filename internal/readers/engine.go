package readers

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// Buffers is an Engine's view of its reader's buffers, by index, used per
// batch and per wait, never per record.
type Buffers interface {
	Len() int
	Publish(i int)
	Ready(i int) bool
	Err(i int) error
}

// Engine is a reader but its buffers' layout (docs/architecture.md).
type Engine struct {
	Mu      sync.Mutex
	Wait    *epoll.Waiter
	Cleanup runtime.Cleanup // frees the resources of a reader nobody closed

	buffers       Buffers
	free          func() error
	heldClaimPoll time.Duration
	turn          int   // the buffer the next claim looks at first
	users         int   // claims read outside Mu
	freed         bool  // resources freed
	lastCopy      *byte // where CopyDestinationLocked last copied: no view
}

// Init starts the engine. free frees the reader's resources; heldClaimPoll
// bounds a wait while a claim is held (zero: none).
func (e *Engine) Init(buffers Buffers, poller *epoll.Poller, flushed error, free func() error, heldClaimPoll time.Duration) {
	e.buffers, e.free, e.heldClaimPoll = buffers, free, heldClaimPoll
	e.Wait = epoll.NewWaiter(&e.Mu, poller, flushed)
}

// InProgress returns how many reads and loops are in progress.
func (e *Engine) InProgress() int {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Wait.Active()
}

// Freed reports whether the resources were freed.
func (e *Engine) Freed() bool { return e.freed }

func (e *Engine) publishAllLocked() {
	if e.freed {
		return
	}
	for i := range e.buffers.Len() {
		e.buffers.Publish(i)
	}
}

// WaitState is one read's or loop's state across its waits.
type WaitState struct {
	Ticket    epoll.Ticket
	busyWaits int
}

// Begin starts a loop or lease, in progress until EndLoopLocked and away
// in its caller's code but while it claims or waits (BackLocked).
func (e *Engine) Begin(op *WaitState) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	if err := e.Wait.Begin(&op.Ticket); err != nil {
		return err
	}
	e.Wait.Away(&op.Ticket)
	return nil
}

// BackLocked brings a loop or lease back into the reader, to claim or wait:
// Close waits for it until AwayLocked or EndLoopLocked.
func (e *Engine) BackLocked(op *WaitState) { e.Wait.Back(&op.Ticket) }

// AwayLocked says that op's goroutine returns to its caller's code.
func (e *Engine) AwayLocked(op *WaitState) { e.Wait.Away(&op.Ticket) }

// EndLoopLocked ends what Begin started, once its claims are released;
// last, so that a Close waiting for it finds its work done.
func (e *Engine) EndLoopLocked(op *WaitState) {
	e.publishAllLocked()
	e.FreeIfUnusedLocked()
	e.Wait.End(&op.Ticket)
}

// ClaimLocked runs claim until it claims something or fails, waiting in
// between; busy: a producer still writes the next record (stalled: so
// before the first claim).
func (e *Engine) ClaimLocked(op *WaitState, stalled bool, claim func() (ok, busy bool, err error)) error {
	for {
		if e.Wait.Closed() {
			return os.ErrClosed
		}
		if !stalled {
			ok, busy, err := claim()
			if ok || err != nil {
				return err
			}
			stalled = busy
		}
		if err := e.WaitLocked(op, stalled); err != nil {
			return err
		}
		stalled = false
	}
}

// ReadLocked is ClaimLocked for one read, begun and ended around it.
func (e *Engine) ReadLocked(claim func() (ok, busy bool, err error)) error {
	var op WaitState
	if err := e.Wait.Begin(&op.Ticket); err != nil {
		return err
	}
	defer e.Wait.End(&op.Ticket)
	return e.ClaimLocked(&op, false, claim)
}

// WaitLocked is called with nothing to claim: it publishes, then returns
// the error that ends the read, or sleeps and returns nil: look again.
// With busy it backs off: a yield eight times, then 2 µs doubling to 1 ms.
func (e *Engine) WaitLocked(op *WaitState, busy bool) error {
	e.publishAllLocked()
	if !busy && e.Wait.HasReadiness() && e.readyAfterEdgesLocked() {
		return nil
	}
	timeout, err := e.Wait.Check(&op.Ticket)
	if err != nil {
		return err
	}
	if busy {
		op.busyWaits++
		e.Mu.Unlock()
		if op.busyWaits <= 8 {
			runtime.Gosched()
		} else if d := time.Microsecond << min(op.busyWaits-8, 10); timeout < 0 {
			time.Sleep(d)
		} else {
			time.Sleep(min(d, timeout))
		}
		e.Mu.Lock()
		return nil
	}
	op.busyWaits = 0
	for i := range e.buffers.Len() {
		if e.buffers.Ready(i) {
			return nil // it may have woken nobody
		}
		if err := e.buffers.Err(i); err != nil {
			return err
		}
	}
	if e.users > 0 && e.heldClaimPoll > 0 && (timeout < 0 || timeout > e.heldClaimPoll) {
		timeout = e.heldClaimPoll
	}
	e.Wait.Sleep(timeout)
	if e.Wait.Closed() {
		return errors.Join(os.ErrClosed, e.FreeIfUnusedLocked())
	}
	if e.Wait.HasReadiness() && e.anyReadyLocked() {
		// The sleep may have taken the wake-up that the readiness
		// descriptor would show: this read takes a record or a batch,
		// and the descriptor says the rest wait.
		e.Wait.SetRecordsLeft(true)
	}
	return nil
}

// ReadinessFD is every reader's ReadinessFD: the descriptor an outside
// event loop polls (epoll.Poller.Readiness), made on the first call.
// pollTakesEdge says that polling a buffer's fd consumes the wake-up it
// reports (a perf event's): then a read that finds nothing takes the
// wake-ups still pending, so that none for records already read is left
// behind.
func (e *Engine) ReadinessFD(pollTakesEdge bool) (int, error) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Wait.ReadinessFD(pollTakesEdge)
}

// readyAfterEdgesLocked is WaitLocked's last look, once it published,
// while the readiness descriptor is out: an event loop polling it waits
// for the kernel's next wake-up once a read finds nothing, and a ring
// buffer's producer wakes only a consumer that it sees caught up
// (bpf_ringbuf_commit, kernel/bpf/ringbuf.c), so the buffers are looked
// at after the publish; for fds whose poll takes the wake-up, after the
// pending wake-ups are taken. Records found go to the read, and to the
// sleepers, whose wake-up may have been taken; none found, the
// descriptor stops saying records are left (Waiter.SetRecordsLeft).
func (e *Engine) readyAfterEdgesLocked() bool {
	if e.Wait.Closed() {
		return false
	}
	e.Wait.TakeEdges()
	if e.anyReadyLocked() {
		if !e.Wait.Idle() {
			e.Wait.Wake()
		}
		return true
	}
	e.Wait.SetRecordsLeft(false)
	return false
}

func (e *Engine) anyReadyLocked() bool {
	for i := range e.buffers.Len() {
		if e.buffers.Ready(i) {
			return true
		}
	}
	return false
}

// AddUserLocked counts a user (a claim read outside Mu) until
// UserDoneLocked.
func (e *Engine) AddUserLocked() {
	e.users++
	if e.heldClaimPoll > 0 {
		e.Wait.WakeUnbounded()
	}
}

// ClaimTurnLocked runs claim on the buffers, taking turns, until one claims
// (alone: no other read is in progress); with hold (a loop's batch) the
// next turn starts past it.
func (e *Engine) ClaimTurnLocked(hold bool, claim func(i int, alone bool) (ok, busy bool, err error)) (ok, busy bool, err error) {
	alone := e.Wait.Active() == 1
	n := e.buffers.Len()
	for k := range n {
		i := (e.turn + k) % n
		ok, bufBusy, err := claim(i, alone)
		if err != nil {
			return false, false, err
		}
		if ok {
			e.turn = i
			if hold {
				e.turn++
				e.AddUserLocked()
			}
			return true, false, nil
		}
		busy = busy || bufBusy
	}
	return false, busy, nil
}

// EndClaimLocked releases claim cl on buffer i, read below upTo.
func (e *Engine) EndClaimLocked(i int, claims *Claims, cl Claim, upTo uint64) {
	gaveBack := claims.Release(cl, upTo)
	if !e.freed {
		e.buffers.Publish(i)
	}
	e.UserDoneLocked(i, gaveBack)
}

// UserDoneLocked ends what AddUserLocked counted: records given back,
// or produced behind the claim (waking nobody), go to whoever sleeps.
func (e *Engine) UserDoneLocked(i int, gaveBack bool) {
	e.users--
	if !e.Wait.Idle() && (gaveBack || e.buffers.Ready(i)) {
		e.Wait.Wake()
	}
}

// FreeIfUnusedLocked frees a closed engine's resources once unused.
func (e *Engine) FreeIfUnusedLocked() error {
	if !e.Wait.Closed() || e.freed || e.users > 0 || !e.Wait.Idle() {
		return nil
	}
	e.freed = true
	return e.free()
}

// SetDeadline is every reader's SetDeadline.
func (e *Engine) SetDeadline(t time.Time) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	e.Wait.SetDeadline(t)
}

// Flush is every reader's Flush (epoll.Waiter.Flush).
func (e *Engine) Flush() error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Wait.Flush()
}

// Close is every reader's Close; stop, if not nil, runs first. It returns
// once every read that was blocked has returned, and every loop that was
// waiting has handed its body ErrClosed (epoll.Waiter.Close); it waits
// for no body.
func (e *Engine) Close(stop func() error) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	if e.Wait.Closed() {
		return nil
	}
	e.publishAllLocked()
	var err error
	if stop != nil {
		err = stop()
	}
	e.Wait.Close()
	e.Cleanup.Stop()
	return errors.Join(err, e.FreeIfUnusedLocked())
}

// Batcher is one loop's batch, called with Mu held: Finish ends the batch
// held, if any (stalled: it read nothing before a busy record), Claim
// claims one of buffer i (ClaimTurnLocked's claim).
type Batcher interface {
	Finish() (stalled bool)
	Claim(i int, alone bool) (ok, busy bool, err error)
}

// Loop is every iterator's loop: it claims a batch and calls body
// without Mu until body returns false, or, once the loop has ended, with
// the error that ended it; however it stops, the batch is finished.
func (e *Engine) Loop(b Batcher, body func(err error) bool) {
	var op WaitState
	if err := e.Begin(&op); err != nil {
		body(err)
		return
	}
	ended := false // by nextBatch, before the body had the error
	defer func() {
		if !ended {
			e.endLoop(b, &op)
		}
	}()
	for {
		if err := e.nextBatch(b, &op); err != nil {
			ended = true
			body(err)
			return
		}
		if !body(nil) {
			return
		}
	}
}

// nextBatch claims the next batch for the body, which runs away, or ends
// the loop with the error it returns: a loop that Close woke has left the
// reader when its body gets ErrClosed, as a Read has when it returns it,
// so that Close waits for no body and the body may call anything.
func (e *Engine) nextBatch(b Batcher, op *WaitState) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	e.BackLocked(op)
	err := e.ClaimLocked(op, b.Finish(), func() (ok, busy bool, err error) {
		return e.ClaimTurnLocked(true, b.Claim)
	})
	if err != nil {
		e.EndLoopLocked(op) // ClaimLocked finished the batch
		return err
	}
	e.AwayLocked(op)
	return nil
}

func (e *Engine) endLoop(b Batcher, op *WaitState) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	b.Finish()
	e.EndLoopLocked(op)
}

// CopyDestination returns where a copy of n bytes goes: dst if it holds
// them and is no view, of any reader's buffer (AddRingMemory), else new
// memory.
func CopyDestination(dst []byte, n int) []byte {
	if n > cap(dst) || inRingMemory(dst) {
		return make([]byte, n)
	}
	return dst[:n]
}

// CopyDestinationLocked is CopyDestination for ReadInto, without the
// search of ring memory when dst is what the last copy returned.
func (e *Engine) CopyDestinationLocked(dst []byte, n int) []byte {
	if n <= cap(dst) && unsafe.SliceData(dst) == e.lastCopy {
		return dst[:n]
	}
	return e.checkedCopyDestinationLocked(dst, n)
}

// checkedCopyDestinationLocked is CopyDestinationLocked for a destination
// it has not checked; apart, so that the check above inlines.
//
//go:noinline
func (e *Engine) checkedCopyDestinationLocked(dst []byte, n int) []byte {
	dst = CopyDestination(dst, n)
	e.lastCopy = unsafe.SliceData(dst)
	return dst
}
