package perf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// engine is what a Reader is made of: a consumer per CPU under the
// protocol of readers.Engine.
type engine struct {
	core         readers.Engine
	consumers    []consumer
	res          *resources
	overwritable bool
	paused       bool
}

type claim = readers.Claim

// resources are what an engine holds outside Go's heap.
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

// init starts the engine on mapped buffers. Unlike a ring buffer's, a perf
// buffer's wakeups do not depend on what the reader published
// (perf_output_wakeup counts what was written), so a held claim strands
// no sleeper and a wait needs no bound.
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

// engineBuffers is the engine as readers.Buffers, a type of its own so
// that these methods are not the Reader's.
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

// setPaused deletes the events from the array (pause) or puts them back.
func (e *engine) setPaused(pause bool, op string) error {
	e.core.Mu.Lock()
	defer e.core.Mu.Unlock()
	if e.core.Wait.Closed() {
		return fmt.Errorf("perf: %s: %w", op, ErrClosed)
	}
	update := e.res.putEntries
	if pause {
		update = e.res.deleteEntries
	}
	if err := update(); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	e.paused = pause
	return nil
}

// consumer is one CPU's consumer side: the claims of its records and what
// the kernel was told, under the Reader's mutex. Claim positions are the
// buffer's for a forward buffer. An overwritable buffer is read in
// windows, each from the newest record down to where the last began; its
// claim positions keep growing from window to window, and bias maps them
// onto the buffer's.
type consumer struct {
	buf        *buffer
	cpu        int
	claims     readers.Claims
	head       uint64 // end of the records produced, as a claim position
	published  uint64 // data_tail the kernel has from us
	batchBytes uint64 // how much a loop reads between two visits to the mutex
	err        error  // sticky: a corrupt buffer stays corrupt

	overwrite bool
	bias      uint64 // claim position minus buffer position (overwritable)
	lastHead  uint64 // data_head when the last window was taken (overwritable)
}

func newConsumer(buf *buffer, cpu int, overwrite bool) (consumer, error) {
	c := consumer{
		buf:        buf,
		cpu:        cpu,
		overwrite:  overwrite,
		batchBytes: min(buf.size/8, maxUnpublished),
	}
	if overwrite {
		c.lastHead = buf.loadHead(0)
		return c, nil
	}
	tail := buf.loadTail()
	if tail%recordAlign != 0 {
		return c, fmt.Errorf("%w: data_tail %d is not 8-byte aligned", ErrCorrupt, tail)
	}
	if err := buf.checkHead(buf.loadHead(tail), tail); err != nil {
		return c, err
	}
	c.claims = readers.NewClaims(tail)
	c.head, c.published = tail, tail
	return c, nil
}

// publish tells the kernel the consumer position (data_tail), which it
// ignores for an overwritable buffer.
func (c *consumer) publish() {
	if c.overwrite {
		return
	}
	if pos := c.claims.ConsumerPos(); pos != c.published {
		c.buf.storeTail(pos)
		c.published = pos
	}
}

// produced reports whether records lie past the claim position, loading
// data_head once the last one is used up; a corrupt one becomes the
// consumer's error.
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

// loadWindow takes the records an overwritable buffer received since the
// last window, at most a buffer's worth, once no claim of the last window
// is out, so that one bias serves every claim.
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

// ready reports whether a claim could find records: returned ones, or
// records produced since the last claim.
func (c *consumer) ready() bool {
	return c.claims.HasReturned() || c.produced()
}

// remaining is Record.Remaining after a record ending at end: the bytes
// produced past it, or -1 for an overwritable buffer, as cilium/ebpf says.
func (c *consumer) remaining(end uint64) int {
	if c.overwrite {
		return -1
	}
	return int(c.head - end)
}

func (c *consumer) cpuErr(err error) error {
	return fmt.Errorf("CPU %d: %w", c.cpu, err)
}

// claimOne claims the next record for Read and consumes it at once (the
// caller copies it under the mutex): the front of a returned claim, or the
// record at the claim position. ok is false if no record is there. err is
// a corrupt buffer (sticky) or, with ok, an unknown record type, consumed.
func (c *consumer) claimOne() (rec record, end uint64, ok bool, err error) {
	var start, limit uint64
	returned, fromReturned := c.claims.Returned()
	switch {
	case c.err != nil:
		return record{}, 0, false, c.err
	case fromReturned:
		start, limit = returned.Start, returned.End
	case !c.produced():
		return record{}, 0, false, c.err
	default:
		start, limit = c.claims.Pos(), c.head
	}
	rec, err = c.buf.parse(start-c.bias, limit-start)
	if err != nil {
		if !c.overwrite {
			c.err = c.cpuErr(err)
			return record{}, 0, false, c.err
		}
		// The oldest record of a full overwritable buffer is cut short by
		// the wrap: the window ends before it.
		rec.size = limit - start
		ok = false
	} else {
		ok = true
	}
	end = start + rec.size
	if fromReturned {
		c.claims.Take(start, end, false)
	} else {
		c.claims.Skip(end)
	}
	if ok && rec.typ != recordSample && rec.typ != recordLost {
		err = &unknownEventError{rec.typ}
	}
	return rec, end, ok, err
}

// claimBatch claims records for a loop: a returned claim whole, else the
// records at the claim position: all that is produced for a loop that
// reads alone (data_head is a record boundary), else up to batchBytes, so
// that others get their share.
func (c *consumer) claimBatch(alone bool) (cl claim, ok bool) {
	if r, some := c.claims.Returned(); some {
		return c.claims.Take(r.Start, r.End, true), true
	}
	if !c.produced() {
		return claim{}, false
	}
	next := c.head
	if !alone {
		next = c.scan(c.claims.Pos(), c.head)
	}
	return c.claims.Hold(next), true
}

// scan walks the records in [pos, end) by their sizes until batchBytes
// are covered, and returns where it stopped: a record boundary, or end if
// a size cannot be right (the loop reading the batch reports it).
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
