package perf

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// engine is what a Reader is made of, shaped like the ring buffer
// reader's (ringbuf/engine.go): a consumer per CPU, one waiter for all of
// them, and the resources, under one mutex. Reads and loops claim records
// from the consumers, wait on the waiter when there are none, and release
// what they read; the resources are freed once the engine is closed and
// nobody uses them.
type engine struct {
	mu           sync.Mutex
	cpus         []consumer
	wait         *epoll.Waiter
	res          *resources
	cleanup      runtime.Cleanup
	users        int         // loop bodies reading a mapping outside mu
	closed       atomic.Bool // Close was called; running loops read it without mu
	released     bool        // resources freed
	turn         int         // the CPU the next read or batch looks at first
	overwritable bool
	paused       bool
}

// resources are what an engine holds outside Go's heap. An engine that is
// never closed frees them from a cleanup.
type resources struct {
	poller   *epoll.Poller
	array    *ebpf.Map // a clone of the caller's: keeps the entries alive
	fds      []int     // the perf events, one per online CPU
	cpus     []int     // their CPUs, the keys in array
	mappings []*mapping
}

func (res *resources) free() error {
	var err error
	if res.poller != nil {
		err = res.poller.Close()
	}
	for _, m := range res.mappings {
		err = errors.Join(err, m.unmap())
	}
	for _, fd := range res.fds {
		err = errors.Join(err, closeFd(fd))
	}
	if res.array != nil {
		err = errors.Join(err, res.array.Close())
	}
	return err
}

// putEntries stores every CPU's event in the array, so that
// bpf_perf_event_output finds it; deleteEntries removes them, so that it
// fails with ENOENT.
func (res *resources) putEntries() error {
	if res.array == nil { // a test's fake buffers
		return nil
	}
	for i, fd := range res.fds {
		if err := res.array.Put(uint32(res.cpus[i]), uint32(fd)); err != nil {
			return fmt.Errorf("put the event of CPU %d in the array: %w", res.cpus[i], err)
		}
	}
	return nil
}

func (res *resources) deleteEntries() error {
	if res.array == nil {
		return nil
	}
	for _, cpu := range res.cpus {
		if err := res.array.Delete(uint32(cpu)); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("delete the event of CPU %d from the array: %w", cpu, err)
		}
	}
	return nil
}

// init starts the engine on buffers that are already mapped.
func (e *engine) init(bufs []*buffer, res *resources, overwritable bool) error {
	for i, buf := range bufs {
		c, err := newConsumer(buf, res.cpus[i], overwritable)
		if err != nil {
			return err
		}
		e.cpus = append(e.cpus, c)
	}
	e.res, e.overwritable = res, overwritable
	e.wait = epoll.NewWaiter(&e.mu, res.poller, ErrFlushed)
	return nil
}

func (e *engine) publishAllLocked() {
	if e.released {
		return
	}
	for i := range e.cpus {
		e.cpus[i].publish()
	}
}

// checkPausedLocked returns ErrMustBePaused for a read of an overwritable
// buffer the kernel may still be writing.
func (e *engine) checkPausedLocked() error {
	if e.overwritable && !e.paused {
		return ErrMustBePaused
	}
	return nil
}

// waitLocked is called with nothing to claim. It publishes every buffer,
// then returns the error that ends the read (ErrClosed, ErrFlushed,
// os.ErrDeadlineExceeded, a corrupt buffer) or sleeps until records may be
// there; nil means look again.
//
// Unlike a ring buffer's, a perf buffer's wakeups do not depend on what
// the reader published (perf_output_wakeup counts bytes or records
// written, kernel/events/ring_buffer.c), so a claim held by a loop body
// strands no sleeper and the sleep needs no bound.
func (e *engine) waitLocked(ticket *epoll.Ticket) error {
	e.publishAllLocked()
	timeout, err := e.wait.Check(ticket)
	if err != nil {
		return err
	}
	for i := range e.cpus {
		c := &e.cpus[i]
		if c.ready() {
			return nil // produced since the last claim, below the wakeup threshold
		}
		if c.err != nil {
			return c.err
		}
	}
	e.wait.Sleep(timeout)
	if e.wait.Closed() {
		return errors.Join(ErrClosed, e.releaseLocked())
	}
	return nil
}

// releasedLocked is called after a loop's claim on c ended: records given
// back go to whoever sleeps.
func (e *engine) releasedLocked(gaveBack bool) {
	e.users--
	if gaveBack && e.wait.Sleeping() {
		e.wait.Wake()
	}
}

// releaseLocked frees the resources of a closed engine once nobody uses
// them.
func (e *engine) releaseLocked() error {
	if !e.wait.Closed() || e.released || !e.wait.Idle() || e.users > 0 {
		return nil
	}
	e.released = true
	return e.res.free()
}

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

func (e *engine) pause() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() {
		return fmt.Errorf("perf: pause: %w", ErrClosed)
	}
	if err := e.res.deleteEntries(); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	e.paused = true
	return nil
}

func (e *engine) resume() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() {
		return fmt.Errorf("perf: resume: %w", ErrClosed)
	}
	if err := e.res.putEntries(); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	e.paused = false
	return nil
}

func (e *engine) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.wait.Closed() {
		return nil
	}
	e.publishAllLocked()
	// Producers fail with ENOENT from now on, as cilium/ebpf documents,
	// even while the caller's map (which shares the entries) stays open.
	err := e.res.deleteEntries()
	e.closed.Store(true)
	e.wait.Close()
	e.cleanup.Stop()
	return errors.Join(err, e.releaseLocked())
}
