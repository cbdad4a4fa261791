package perf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// engine is what a Reader is made of, as the ring buffer reader is: a
// consumer per CPU and the protocol of internal/readers over them (one
// mutex, one waiter, the resources). Reads and loops claim records from
// the consumers, wait when there are none, and release what they read.
type engine struct {
	core         readers.Engine
	consumers    []consumer
	res          *resources
	turn         int // the consumer the next read or batch looks at first
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
//
// Unlike a ring buffer's, a perf buffer's wakeups do not depend on what
// the reader published (perf_output_wakeup counts bytes or records
// written, kernel/events/ring_buffer.c), so a claim held by a loop body
// strands no sleeper and a wait needs no bound.
func (e *engine) init(bufs []*buffer, res *resources, overwritable bool) error {
	for i, buf := range bufs {
		c, err := newConsumer(buf, res.cpus[i], overwritable)
		if err != nil {
			return err
		}
		e.consumers = append(e.consumers, c)
	}
	e.res, e.overwritable = res, overwritable
	e.core.Init((*engineBuffers)(e), res.poller, ErrFlushed, res.free, 0)
	return nil
}

// engineBuffers is the engine as readers.Buffers sees it: a type of its
// own, so that these methods do not become the Reader's.
type engineBuffers engine

func (b *engineBuffers) Len() int         { return len(b.consumers) }
func (b *engineBuffers) Publish(i int)    { b.consumers[i].publish() }
func (b *engineBuffers) Ready(i int) bool { return b.consumers[i].ready() }
func (b *engineBuffers) Err(i int) error  { return b.consumers[i].err }

// checkPausedLocked returns ErrMustBePaused for a read of an overwritable
// buffer the kernel may still be writing.
func (e *engine) checkPausedLocked() error {
	if e.overwritable && !e.paused {
		return ErrMustBePaused
	}
	return nil
}

func (e *engine) pause() error {
	e.core.Mu.Lock()
	defer e.core.Mu.Unlock()
	if e.core.Wait.Closed() {
		return fmt.Errorf("perf: pause: %w", ErrClosed)
	}
	if err := e.res.deleteEntries(); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	e.paused = true
	return nil
}

func (e *engine) resume() error {
	e.core.Mu.Lock()
	defer e.core.Mu.Unlock()
	if e.core.Wait.Closed() {
		return fmt.Errorf("perf: resume: %w", ErrClosed)
	}
	if err := e.res.putEntries(); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	e.paused = false
	return nil
}

func (e *engine) close() error {
	// Producers fail with ENOENT from now on, as cilium/ebpf documents,
	// even while the caller's map (which shares the entries) stays open.
	return e.core.Close(e.res.deleteEntries)
}
