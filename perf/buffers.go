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

// buffers is what a Reader is made of: a consumer per CPU's buffer under
// one engine, and the events' entries in the array.
type buffers struct {
	engine    readers.Engine
	consumers []consumer
	res       *resources

	entries sync.Mutex  // orders Pause, Resume and Close on the array
	removed bool        // Close removed the entries for good
	paused  atomic.Bool // Pause removed them until Resume
}

// resources are what buffers hold outside Go's heap.
type resources struct {
	poller   *epoll.Poller
	array    *ebpf.Map // a clone of the caller's: keeps the entries
	fds      []int     // the perf events
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

// init starts bs on mapped buffers; a wait behind a held claim needs no
// bound (0): the kernel wakes the reader whatever was published.
func (bs *buffers) init(bufs []*buffer, res *resources, overwritable bool) error {
	for i, buf := range bufs {
		c, err := newConsumer(buf, res.cpus[i], overwritable)
		if err != nil {
			return err
		}
		bs.consumers = append(bs.consumers, c)
	}
	bs.res = res
	bs.engine.Init((*engineBuffers)(bs), res.poller, ErrFlushed, res.free, 0)
	return nil
}

// engineBuffers is buffers as readers.Buffers, methods the Reader lacks.
type engineBuffers buffers

func (b *engineBuffers) Len() int        { return len(b.consumers) }
func (b *engineBuffers) Publish(i int)   { b.consumers[i].publish() }
func (b *engineBuffers) Err(i int) error { return b.consumers[i].err }
func (b *engineBuffers) Ready(i int) bool {
	c := &b.consumers[i]
	return c.ready() || c.overwrite && !b.paused.Load() // a read: ErrMustBePaused
}

// errResumeHeld is Resume's error while a loop body holds records of an
// overwritable buffer, which the kernel would write over.
var errResumeHeld = errors.New("a loop body or read holds records of an overwritable buffer")

// setPaused runs under the engine's lock, so that no claim sees paused
// while the kernel writes: a claim of an overwritable buffer checks it.
func (bs *buffers) setPaused(pause bool, op string) error {
	var err error
	if closed := bs.engine.Inspect(func() { err = bs.setPausedLocked(pause) }); closed != nil {
		err = ErrClosed
	}
	if err != nil {
		return fmt.Errorf("perf: %s: %w", op, err)
	}
	return nil
}

func (bs *buffers) setPausedLocked(pause bool) error {
	bs.entries.Lock()
	defer bs.entries.Unlock()
	if bs.removed {
		return ErrClosed
	}
	for i := range bs.consumers {
		if c := &bs.consumers[i]; !pause && c.overwrite && c.claims.Holding() {
			return errResumeHeld
		}
	}
	if err := bs.res.putEntries(!pause); err != nil {
		return err
	}
	if !pause {
		for i := range bs.consumers {
			if c := &bs.consumers[i]; c.overwrite {
				c.dropWindow()
			}
		}
	}
	bs.paused.Store(pause)
	return nil
}

// removeEntries deletes the events from the array for good.
func (bs *buffers) removeEntries() error {
	bs.entries.Lock()
	defer bs.entries.Unlock()
	bs.removed = true
	return bs.res.putEntries(false)
}
