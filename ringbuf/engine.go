package ringbuf

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// engine is what Reader and MultiReader are made of: a consumer per ring,
// one waiter for all of them, and the resources, under one mutex. Reads
// and loops claim records from the consumers, wait on the waiter when
// there are none, and release what they read; the resources are freed
// once the engine is closed and nobody uses them.
type engine struct {
	mu       sync.Mutex
	rings    []consumer
	keys     []int // Record.Ring of each ring (MultiReader); nil for a Reader
	wait     *epoll.Waiter
	res      *resources
	cleanup  runtime.Cleanup
	users    int  // loop bodies and a peek view using a mapping outside mu
	released bool // resources freed
	turn     int  // the ring the next batch is claimed from first
}

// resources are what an engine holds outside Go's heap. An engine that is
// never closed frees them from a cleanup.
type resources struct {
	poller   *epoll.Poller
	mappings []*mapping
}

func (res *resources) free() error {
	err := res.closePoller()
	for _, m := range res.mappings {
		err = errors.Join(err, m.unmap())
	}
	return err
}

func (res *resources) closePoller() error {
	if res.poller == nil {
		return nil
	}
	err := res.poller.Close()
	res.poller = nil
	return err
}

// init starts the engine on rings that are already mapped, each at the
// consumer position the kernel holds.
func (e *engine) init(rings []*ring, keys []int, res *resources) error {
	for i, rg := range rings {
		pos := rg.loadConsumer()
		if pos%recordAlign != 0 {
			return fmt.Errorf("%w: consumer position %d is not 8-byte aligned", ErrCorrupt, pos)
		}
		if keys != nil && i >= len(keys) {
			return errors.New("ring without a key")
		}
		e.rings = append(e.rings, newConsumer(rg, pos))
	}
	e.keys, e.res = keys, res
	e.wait = epoll.NewWaiter(&e.mu, res.poller, ErrFlushed)
	return nil
}

// ringErr names the ring an error came from, when there are several.
func (e *engine) ringErr(i int, err error) error {
	if e.keys == nil {
		return err
	}
	return fmt.Errorf("ring %d: %w", e.keys[i], err)
}

func (e *engine) publishAllLocked() {
	if e.released {
		return
	}
	for i := range e.rings {
		e.rings[i].publish()
	}
}

// heldClaimPoll bounds a wait while a claim pins a consumer position: the
// kernel wakes a reader only for a record at the position it knows, so
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
	ticket    epoll.Ticket
	busyWaits int
}

// waitLocked is called with nothing to claim. It publishes every ring,
// then returns the error that ends the read (ErrClosed, ErrFlushed,
// os.ErrDeadlineExceeded, a corrupt ring) or sleeps until records may be
// there; nil means look again. With busy, a producer is still writing the
// next record, which may wake nobody: it backs off instead of sleeping.
func (e *engine) waitLocked(op *waitState, busy bool) error {
	e.publishAllLocked()
	timeout, err := e.wait.Check(&op.ticket)
	if err != nil {
		return err
	}
	if busy {
		op.busyWaits++
		e.mu.Unlock()
		if d := busyBackoff(op.busyWaits, timeout); d == 0 {
			runtime.Gosched()
		} else {
			time.Sleep(d)
		}
		e.mu.Lock()
		return nil
	}
	op.busyWaits = 0
	pinned := false
	for i := range e.rings {
		c := &e.rings[i]
		if c.ready() {
			return nil // produced since the last claim: it may have woken nobody
		}
		if c.err != nil {
			return e.ringErr(i, c.err)
		}
		pinned = pinned || !c.claims.Empty()
	}
	if pinned && (timeout < 0 || timeout > heldClaimPoll) {
		timeout = heldClaimPoll
	}
	e.wait.Sleep(timeout)
	if e.wait.Closed() {
		return errors.Join(ErrClosed, e.releaseLocked())
	}
	return nil
}

// claimedLocked is called after a claim that a caller holds: the consumer
// position is pinned now, so a sleeper with no time limit must take one.
func (e *engine) claimedLocked() {
	e.users++
	e.wait.WakeUnbounded()
}

// releasedLocked is called after a claim on ring c ended: records given
// back, or committed behind the claim (which woke nobody), go to whoever
// sleeps.
func (e *engine) releasedLocked(c *consumer, gaveBack bool) {
	e.users--
	if e.wait.Sleeping() && (gaveBack || c.ready()) {
		e.wait.Wake()
	}
}

// releaseLocked frees the resources of a closed engine once nobody uses
// them: no loop body or peek view reads a mapping, nobody sleeps.
func (e *engine) releaseLocked() error {
	if !e.wait.Closed() || e.released || e.users > 0 || !e.wait.Idle() {
		return nil
	}
	e.released = true
	return e.res.free()
}

// setDeadline, flush and close are the public methods of both readers.

func (e *engine) setDeadline(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wait.SetDeadline(t)
}

func (e *engine) flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.wait.Flush()
}

func (e *engine) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() {
		return nil
	}
	e.publishAllLocked()
	e.wait.Close()
	e.cleanup.Stop()
	return e.releaseLocked()
}
