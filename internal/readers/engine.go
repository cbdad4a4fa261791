package readers

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// Buffers is what an Engine knows of its reader's buffers (the rings of a
// ring buffer reader, the CPUs of a perf reader), each by its index. The
// engine calls it per batch and per wait, never per record.
type Buffers interface {
	Len() int
	// Publish tells the kernel buffer i's consumer position.
	Publish(i int)
	// Ready reports whether a claim could find records in buffer i:
	// returned ones, or records produced since the last claim, which may
	// have woken nobody.
	Ready(i int) bool
	// Err returns the sticky error of a buffer that cannot be read on
	// (corrupt), naming the buffer.
	Err(i int) error
	// Pinned reports whether a claim held on buffer i keeps the kernel's
	// consumer position back.
	Pinned(i int) bool
}

// Engine is the part of a reader that does not depend on its buffers'
// layout: one mutex over everything, the waiter of every read and loop,
// the count of claims read outside the mutex, and the resources, freed
// once the engine is closed and nobody uses them.
type Engine struct {
	Mu      sync.Mutex
	Wait    *epoll.Waiter
	Cleanup runtime.Cleanup // frees the resources of a reader nobody closed

	buffers    Buffers
	free       func() error
	pinnedPoll time.Duration
	users      int  // claims read outside Mu: loop bodies, a peek view
	released   bool // resources freed
}

// Init starts the engine. flushed is the reader's ErrFlushed; free frees
// its resources. pinnedPoll bounds a wait while a claim pins a consumer
// position, for buffers whose kernel wakes a reader only for records at
// the position it knows (zero: no bound).
func (e *Engine) Init(buffers Buffers, poller *epoll.Poller, flushed error, free func() error, pinnedPoll time.Duration) {
	e.buffers, e.free, e.pinnedPoll = buffers, free, pinnedPoll
	e.Wait = epoll.NewWaiter(&e.Mu, poller, flushed)
}

// Released reports whether the resources were freed: the mappings are gone.
func (e *Engine) Released() bool { return e.released }

// PublishAllLocked tells the kernel every buffer's consumer position.
func (e *Engine) PublishAllLocked() {
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

// Begin starts a loop: a read in progress for the waiter until EndLoop.
func (e *Engine) Begin(op *WaitState) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Wait.Begin(&op.Ticket)
}

// EndLoopLocked ends what Begin started, once the loop gave its claim
// back: what it consumed is published, and the resources of a closed
// engine are freed if nobody else uses them.
func (e *Engine) EndLoopLocked(op *WaitState) {
	e.Wait.End(&op.Ticket)
	e.PublishAllLocked()
	e.ReleaseLocked()
}

// ClaimLocked runs claim until it claims something or fails, waiting in
// between: the loop of every read and batch, for a read or loop that
// began op. claim reports busy when a producer is still writing the next
// record; stalled says so before the first claim (a batch that stopped at
// such a record), so that the first thing is a back-off.
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

// ReadLocked is ClaimLocked for one read: a wait of its own, begun and
// ended around it.
func (e *Engine) ReadLocked(claim func() (ok, busy bool, err error)) error {
	var op WaitState
	if err := e.Wait.Begin(&op.Ticket); err != nil {
		return err
	}
	defer e.Wait.End(&op.Ticket)
	return e.ClaimLocked(&op, false, claim)
}

// WaitLocked is called with nothing to claim. It publishes every buffer,
// then returns the error that ends the read (os.ErrClosed, the flush
// error, os.ErrDeadlineExceeded, a corrupt buffer) or sleeps until
// records may be there; nil means look again. With busy, a producer is
// still writing the next record, which may wake nobody: it backs off
// instead of sleeping.
func (e *Engine) WaitLocked(op *WaitState, busy bool) error {
	e.PublishAllLocked()
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
	pinned := false
	for i := range e.buffers.Len() {
		if e.buffers.Ready(i) {
			return nil // produced since the last claim: it may have woken nobody
		}
		if err := e.buffers.Err(i); err != nil {
			return err
		}
		pinned = pinned || e.buffers.Pinned(i)
	}
	if pinned && e.pinnedPoll > 0 && (timeout < 0 || timeout > e.pinnedPoll) {
		timeout = e.pinnedPoll
	}
	e.Wait.Sleep(timeout)
	if e.Wait.Closed() {
		return errors.Join(os.ErrClosed, e.ReleaseLocked())
	}
	return nil
}

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

// ClaimedLocked is called after a claim that a caller reads outside Mu:
// the resources stay until it is released, and a consumer position it
// pins makes a sleeper with no time limit take one.
func (e *Engine) ClaimedLocked() {
	e.users++
	if e.pinnedPoll > 0 {
		e.Wait.WakeUnbounded()
	}
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

// ReleaseLocked frees the resources of a closed engine once nobody uses
// them: no claim is read outside Mu, nobody sleeps.
func (e *Engine) ReleaseLocked() error {
	if !e.Wait.Closed() || e.released || e.users > 0 || !e.Wait.Idle() {
		return nil
	}
	e.released = true
	return e.free()
}

// SetDeadline, Flush and Close are the public methods of every reader.

// SetDeadline sets when waits end with os.ErrDeadlineExceeded.
func (e *Engine) SetDeadline(t time.Time) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	e.Wait.SetDeadline(t)
}

// Flush ends the waits in progress with the flush error (epoll.Waiter).
func (e *Engine) Flush() error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Wait.Flush()
}

// Close publishes what was consumed, runs stop (nil: nothing to stop),
// ends every wait with os.ErrClosed, and frees the resources once nobody
// uses them. A second Close does nothing.
func (e *Engine) Close(stop func() error) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	if e.Wait.Closed() {
		return nil
	}
	e.PublishAllLocked()
	var err error
	if stop != nil {
		err = stop()
	}
	e.Wait.Close()
	e.Cleanup.Stop()
	return errors.Join(err, e.ReleaseLocked())
}
