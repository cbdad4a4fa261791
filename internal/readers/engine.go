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

// Buffers is what an Engine knows of its reader's buffers (a ring buffer
// reader's rings, a perf reader's CPUs), each by its index. The engine
// calls it per batch and per wait, never per record.
type Buffers interface {
	Len() int
	// Publish tells the kernel buffer i's consumer position.
	Publish(i int)
	// Ready reports whether a claim could find records in buffer i:
	// returned ones, or records produced since the last claim.
	Ready(i int) bool
	// Err returns the sticky error of a corrupt buffer, naming it.
	Err(i int) error
}

// Engine is the part of a reader that does not depend on its buffers'
// layout: one mutex over everything, the waiter of every read and loop,
// the count of claims read outside the mutex, and the resources, freed
// once the engine is closed and nobody uses them.
type Engine struct {
	Mu      sync.Mutex
	Wait    *epoll.Waiter
	Cleanup runtime.Cleanup // frees the resources of a reader nobody closed
	Turn    int             // the buffer the next claim looks at first

	buffers    Buffers
	free       func() error
	pinnedPoll time.Duration
	users      int  // claims read outside Mu: loop bodies, a peek view, a lease
	released   bool // resources freed
}

// Init starts the engine. flushed is the reader's ErrFlushed; free frees
// its resources. pinnedPoll bounds a wait while a claim is held, for
// buffers whose kernel wakes a reader only for records at the consumer
// position it knows (zero: no bound).
func (e *Engine) Init(buffers Buffers, poller *epoll.Poller, flushed error, free func() error, pinnedPoll time.Duration) {
	e.buffers, e.free, e.pinnedPoll = buffers, free, pinnedPoll
	e.Wait = epoll.NewWaiter(&e.Mu, poller, flushed)
}

// Released reports whether the resources were freed: the mappings are gone.
func (e *Engine) Released() bool { return e.released }

func (e *Engine) publishAllLocked() {
	if e.released {
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

// Begin starts a loop: a read in progress for the waiter until EndLoopLocked.
func (e *Engine) Begin(op *WaitState) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Wait.Begin(&op.Ticket)
}

// EndLoopLocked ends what Begin started, once the loop gave its claims
// back: it publishes, and frees a closed engine's resources if nobody
// else uses them.
func (e *Engine) EndLoopLocked(op *WaitState) {
	e.Wait.End(&op.Ticket)
	e.publishAllLocked()
	e.ReleaseLocked()
}

// ClaimLocked runs claim until it claims something or fails, waiting in
// between: the loop of every read and batch. claim reports busy when a
// producer still writes the next record; stalled says so before the first
// claim (a batch that stopped at such a record), so that a back-off comes
// first.
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

// WaitLocked is called with nothing to claim. It publishes every buffer
// (the kernel wakes a ring buffer's reader only once it caught up), then
// returns the error that ends the read (os.ErrClosed, the flush error,
// os.ErrDeadlineExceeded, a corrupt buffer) or sleeps until records may be
// there; nil means look again. With busy, a producer still writes the next
// record, which may wake nobody: it backs off instead of sleeping.
func (e *Engine) WaitLocked(op *WaitState, busy bool) error {
	e.publishAllLocked()
	timeout, err := e.Wait.Check(&op.Ticket)
	if err != nil {
		return err
	}
	if busy {
		op.busyWaits++
		e.Mu.Unlock()
		if d := busyBackoff(op.busyWaits, timeout); d == 0 {
			runtime.Gosched()
		} else {
			time.Sleep(d)
		}
		e.Mu.Lock()
		return nil
	}
	op.busyWaits = 0
	for i := range e.buffers.Len() {
		if e.buffers.Ready(i) {
			return nil // produced since the last claim: it may have woken nobody
		}
		if err := e.buffers.Err(i); err != nil {
			return err
		}
	}
	// With no records returned, a held claim is one read outside Mu.
	if e.users > 0 && e.pinnedPoll > 0 && (timeout < 0 || timeout > e.pinnedPoll) {
		timeout = e.pinnedPoll
	}
	e.Wait.Sleep(timeout)
	if e.Wait.Closed() {
		return errors.Join(os.ErrClosed, e.ReleaseLocked())
	}
	return nil
}

// busyBackoff is how long to wait the n-th time in a row for a record a
// producer still writes: a yield (0) the first eight times, then from
// 2 µs doubling up to a millisecond, never past timeout (if not negative).
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

// ClaimedLocked is called after a claim that a caller reads outside Mu:
// the resources stay until it is released, and a sleeper with no time
// limit wakes to take pinnedPoll's.
func (e *Engine) ClaimedLocked() {
	e.users++
	if e.pinnedPoll > 0 {
		e.Wait.WakeUnbounded()
	}
}

// ClaimTurnLocked claims a loop's batch from the first buffer with
// records, from Turn on, so that buffers take turns. claim tries buffer i;
// alone says that no other read or loop is in progress.
func (e *Engine) ClaimTurnLocked(claim func(i int, alone bool) (ok, busy bool, err error)) (ok, busy bool, err error) {
	alone := e.Wait.Active() == 1
	n := e.buffers.Len()
	for k := range n {
		i := (e.Turn + k) % n
		ok, bufBusy, err := claim(i, alone)
		if err != nil {
			return false, false, err
		}
		if ok {
			e.Turn = i + 1
			e.ClaimedLocked()
			return true, false, nil
		}
		busy = busy || bufBusy
	}
	return false, busy, nil
}

// EndClaimLocked ends held claim cl on buffer i, read below upTo: the rest
// goes back, and the position is published.
func (e *Engine) EndClaimLocked(i int, claims *Claims, cl Claim, upTo uint64) {
	gaveBack := claims.Release(cl, upTo)
	if !e.released {
		e.buffers.Publish(i)
	}
	e.ReleasedLocked(i, gaveBack)
}

// ReleasedLocked is called after a claim on buffer i ended: records given
// back, or produced behind the claim (which may have woken nobody), go to
// whoever sleeps.
func (e *Engine) ReleasedLocked(i int, gaveBack bool) {
	e.users--
	if e.Wait.Sleeping() && (gaveBack || e.buffers.Ready(i)) {
		e.Wait.Wake()
	}
}

// ReleaseLocked frees the resources of a closed engine once no claim is
// read outside Mu and nobody sleeps.
func (e *Engine) ReleaseLocked() error {
	if !e.Wait.Closed() || e.released || e.users > 0 || !e.Wait.Idle() {
		return nil
	}
	e.released = true
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

// Close publishes what was consumed, runs stop (if not nil), ends every
// wait with os.ErrClosed, and frees the resources once nobody uses them.
// A second Close does nothing.
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
	return errors.Join(err, e.ReleaseLocked())
}

// Batcher is one loop's batch as a reader keeps it; Loop calls it with Mu
// held, once per batch.
type Batcher interface {
	// Finish ends the batch the loop holds, if any: what the loop read is
	// consumed, the rest given back, the position published. stalled
	// reports that the loop read nothing before a record a producer still
	// writes, so that the next claim backs off first.
	Finish() (stalled bool)
	// Claim claims the loop's next batch; busy as for ClaimLocked.
	Claim() (ok, busy bool, err error)
}

// Loop is the batch loop of every reader's iterators. It claims a batch,
// waiting for one as a read does, and calls body with it (err nil) until
// body returns false, or once with the error that ended the wait. However
// the loop stops (a break, an error, a panic in body, which runs without
// Mu), the batch is finished and published before Loop returns.
func (e *Engine) Loop(b Batcher, body func(err error) bool) {
	var op WaitState
	if err := e.Begin(&op); err != nil {
		body(err)
		return
	}
	defer e.endLoop(b, &op)
	for {
		if err := e.nextBatch(b, &op); err != nil {
			body(err)
			return
		}
		if !body(nil) {
			return
		}
	}
}

func (e *Engine) nextBatch(b Batcher, op *WaitState) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.ClaimLocked(op, b.Finish(), b.Claim)
}

func (e *Engine) endLoop(b Batcher, op *WaitState) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	b.Finish()
	e.EndLoopLocked(op)
}

// CopyDestination returns the memory a copying read copies a record of n
// bytes into: dst resliced, if it holds n bytes and does not overlap area,
// the mapped buffer whose views the zero-copy reads hand out (a record
// reused from a loop still points there, and must never be written), else
// new memory.
func CopyDestination(dst []byte, n int, area []byte) []byte {
	if n > cap(dst) || Overlaps(dst, area) {
		return make([]byte, n)
	}
	return dst[:n]
}

// Overlaps reports whether b, up to its capacity, overlaps area.
func Overlaps(b, area []byte) bool {
	if cap(b) == 0 || len(area) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	areaStart := uintptr(unsafe.Pointer(unsafe.SliceData(area)))
	return start < areaStart+uintptr(len(area)) && areaStart < start+uintptr(cap(b))
}
