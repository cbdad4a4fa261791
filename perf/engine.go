package perf

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// engine is a consumer per CPU under readers.Engine.
type engine struct {
	core      readers.Engine
	consumers []consumer
	res       *resources
	read      readInto // ReadInto's, under the engine's lock

	entries sync.Mutex  // orders Pause, Resume and Close on the array
	removed bool        // Close removed the entries for good
	paused  atomic.Bool // Pause removed them until Resume
}

type claim = readers.Claim

// resources are what an engine holds outside Go's heap.
type resources struct {
	poller   *epoll.Poller
	array    *ebpf.Map // a clone of the caller's: keeps the entries alive
	fds      []int     // the perf events, one per online CPU
	cpus     []int     // their CPUs, the keys in array
	mappings [][]byte
}

// free releases the resources; a second call finds nothing to release.
func (res *resources) free() error {
	var err error
	if res.poller != nil {
		err, res.poller = res.poller.Close(), nil
	}
	for _, m := range res.mappings {
		err = errors.Join(err, unmap(m))
	}
	for _, fd := range res.fds {
		err = errors.Join(err, closeFd(fd))
	}
	res.mappings, res.fds = nil, nil
	if res.array != nil {
		err, res.array = errors.Join(err, res.array.Close()), nil
	}
	return err
}

// putEntries puts every CPU's event in the array, or deletes them.
func (res *resources) putEntries(put bool) error {
	for i, cpu := range res.cpus {
		switch {
		case res.array == nil: // a test's fake buffers
		case put:
			if err := res.array.Put(uint32(cpu), uint32(res.fds[i])); err != nil {
				return fmt.Errorf("put the event of CPU %d in the array: %w", cpu, err)
			}
		default:
			if err := res.array.Delete(uint32(cpu)); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				return fmt.Errorf("delete the event of CPU %d from the array: %w", cpu, err)
			}
		}
	}
	return nil
}

// init starts the engine on mapped buffers; a wait while a claim is held
// needs no bound (docs/architecture.md, "The perf reader").
func (e *engine) init(bufs []*buffer, res *resources, overwritable bool) error {
	for i, buf := range bufs {
		c, err := newConsumer(buf, res.cpus[i], overwritable)
		if err != nil {
			return err
		}
		e.consumers = append(e.consumers, c)
	}
	e.res = res
	e.core.Init((*engineBuffers)(e), res.poller, ErrFlushed, res.free, 0)
	return nil
}

// engineBuffers is the engine as readers.Buffers (not the Reader's methods).
type engineBuffers engine

func (b *engineBuffers) Len() int         { return len(b.consumers) }
func (b *engineBuffers) Publish(i int)    { b.consumers[i].publish() }
func (b *engineBuffers) Ready(i int) bool { return b.consumers[i].ready() }
func (b *engineBuffers) Err(i int) error  { return b.consumers[i].err }

// setPaused deletes the events from the array (pause) or puts them back.
func (e *engine) setPaused(pause bool, op string) error {
	e.entries.Lock()
	defer e.entries.Unlock()
	if e.removed {
		return fmt.Errorf("perf: %s: %w", op, ErrClosed)
	}
	if err := e.res.putEntries(!pause); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	e.paused.Store(pause)
	return nil
}

// removeEntries deletes the events from the array for good: Close's.
func (e *engine) removeEntries() error {
	e.entries.Lock()
	defer e.entries.Unlock()
	e.removed = true
	return e.res.putEntries(false)
}

// consumer is one CPU's claims and what the kernel was told of them. An
// overwritable buffer is read in windows (loadWindow) whose claim
// positions keep growing; bias maps them onto the buffer's.
type consumer struct {
	buf        *buffer
	cpu        int
	claims     readers.Claims
	head       uint64 // end of the records produced, as a claim position
	published  uint64 // data_tail the kernel has from us
	batchBytes uint64
	err        error // sticky

	overwrite bool
	bias      uint64 // claim position minus buffer position
	lastHead  uint64 // data_head when the last window was taken
}

func newConsumer(buf *buffer, cpu int, overwrite bool) (consumer, error) {
	c := consumer{buf: buf, cpu: cpu, overwrite: overwrite, batchBytes: readers.BatchBytes(buf.size)}
	if overwrite {
		c.lastHead = buf.loadHead(0)
		return c, nil
	}
	tail := buf.loadTail()
	if err := buf.checkHead(buf.loadHead(tail), tail); err != nil {
		return c, err
	}
	c.claims = readers.NewClaims(tail)
	c.head, c.published = tail, tail
	return c, nil
}

// publish tells the kernel data_tail, unless overwritable.
func (c *consumer) publish() {
	if pos := c.claims.ConsumerPos(); pos != c.published && !c.overwrite {
		c.buf.storeTail(pos)
		c.published = pos
	}
}

// produced is ringbuf's consumer.produced, with data_head.
func (c *consumer) produced() bool {
	if c.claims.Pos() == c.head && c.err == nil {
		if c.overwrite {
			c.loadWindow()
		} else {
			consumed := c.claims.ConsumerPos()
			head := c.buf.loadHead(consumed)
			if err := c.buf.checkHead(head, consumed); err != nil {
				c.err = c.cpuErr(err)
				return false
			}
			c.head = head
		}
	}
	return c.claims.Pos() != c.head
}

// loadWindow takes what an overwritable buffer received since the last
// window, at most its size, once no claim is out (one bias serves all).
func (c *consumer) loadWindow() {
	if !c.claims.Empty() {
		return
	}
	head := c.buf.loadHead(c.lastHead)
	if head == c.lastHead {
		return
	}
	if head%recordAlign != 0 {
		c.err = c.cpuErr(fmt.Errorf("%w: data_head %d is not 8-byte aligned", ErrCorrupt, head))
		return
	}
	written := min(c.lastHead-head, c.buf.size)
	c.bias = c.head - head
	c.lastHead = head
	c.head += written
}

func (c *consumer) ready() bool {
	return c.claims.HasReturned() || c.produced()
}

func (c *consumer) cpuErr(err error) error {
	return fmt.Errorf("CPU %d: %w", c.cpu, err)
}

// scan returns the first record boundary batchBytes past pos, or end (at
// a bad size too: the walk reports it).
func (c *consumer) scan(pos, end uint64) uint64 {
	for next := pos; next < end; {
		size := uint64(c.buf.headerAt(next - c.bias).size)
		if size < headerSize || size%recordAlign != 0 || size > end-next {
			return end
		}
		next += size
		if next-pos >= c.batchBytes {
			return next
		}
	}
	return end
}
