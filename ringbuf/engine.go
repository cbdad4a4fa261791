package ringbuf

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// engine is what Reader and MultiReader are made of: a consumer per ring
// under readers.Engine.
type engine struct {
	core      readers.Engine
	consumers []consumer
	keys      []int    // Record.Ring of each consumer's ring (MultiReader); nil for a Reader
	peek      peekView // the Reader's peeked record (view.go)
}

// resources are what an engine holds outside Go's heap. free runs once
// the engine is closed and idle, and keeps the consumer pages
// (mapping.retire) for release, when Go collects the engine.
type resources struct {
	poller   *epoll.Poller
	mappings []*mapping
}

func (res *resources) free() error {
	var err error
	if res.poller != nil {
		err, res.poller = res.poller.Close(), nil
	}
	for _, m := range res.mappings {
		err = errors.Join(err, m.retire(false))
	}
	return err
}

func (res *resources) release() error {
	err := res.free()
	for _, m := range res.mappings {
		err = errors.Join(err, m.unmap())
	}
	return err
}

// newEngine maps and polls the maps and starts an engine on them; keys
// are their Record.Ring (nil for a Reader).
func newEngine(maps []*ebpf.Map, keys []int) (_ *engine, err error) {
	e, res := &engine{keys: keys}, &resources{}
	defer func() {
		if err != nil {
			err = errors.Join(err, res.release())
		}
	}()
	rings := make([]*ring, len(maps))
	for i, m := range maps {
		var mp *mapping
		if mp, rings[i], err = mapRingMap(m); err != nil {
			return nil, e.ringErr(i, err)
		}
		res.mappings = append(res.mappings, mp)
	}
	if res.poller, err = epoll.New(); err != nil {
		return nil, err
	}
	for i, m := range maps {
		if err := res.poller.AddEdgeTriggered(m.FD()); err != nil {
			return nil, e.ringErr(i, err)
		}
	}
	if err := e.init(rings, res); err != nil {
		return nil, err
	}
	// On the engine, not the reader: a loop holds the engine through the
	// method value Records returns, after the caller dropped the reader.
	// Not core.Cleanup, which Close stops: the consumer pages outlive Close.
	runtime.AddCleanup(e, func(res *resources) { res.release() }, res)
	return e, nil
}

// mapRingMap maps m, a ring buffer this platform maps.
func mapRingMap(m *ebpf.Map) (*mapping, *ring, error) {
	if m == nil {
		return nil, nil, errors.New("nil map")
	}
	if err := requireMapped(m.Type(), runtime.GOOS); err != nil {
		return nil, nil, err
	}
	// The producer of such a ring laps the reader (ring.go): refuse it
	// here, before a reader reads overwritten records.
	if m.Flags()&rbOverwrite != 0 {
		return nil, nil, fmt.Errorf("%v is an overwrite-mode ring buffer (BPF_F_RB_OVERWRITE), which its producer overwrites: read it with NewSnapshotReader: %w", m, ebpf.ErrNotSupported)
	}
	size, err := ringSize(m)
	if err != nil {
		return nil, nil, err
	}
	return mapRing(m.FD(), size, false)
}

// init starts the engine on mapped rings, at the kernel's consumer positions.
func (e *engine) init(rings []*ring, res *resources) error {
	for _, rg := range rings {
		pos := rg.loadConsumer()
		if pos%recordAlign != 0 {
			return fmt.Errorf("%w: consumer position %d is not 8-byte aligned", ErrCorrupt, pos)
		}
		e.consumers = append(e.consumers, newConsumer(rg, pos))
	}
	e.core.Init((*engineBuffers)(e), res.poller, ErrFlushed, res.free, heldClaimPoll)
	return nil
}

// heldClaimPoll bounds a wait while a claim is held: the kernel wakes
// only a reader that caught up.
const heldClaimPoll = time.Millisecond

// engineBuffers is the engine as readers.Buffers (not the readers' methods).
type engineBuffers engine

func (b *engineBuffers) Len() int         { return len(b.consumers) }
func (b *engineBuffers) Publish(i int)    { (*engine)(b).publishLocked(i) }
func (b *engineBuffers) Ready(i int) bool { return b.consumers[i].ready() }
func (b *engineBuffers) Err(i int) error  { return (*engine)(b).ringErr(i, b.consumers[i].err) }

// ringErr names the ring an error came from, when there are several.
func (e *engine) ringErr(i int, err error) error {
	if e.keys == nil || err == nil {
		return err
	}
	return fmt.Errorf("ring %d: %w", e.keys[i], err)
}

// publishLocked tells the kernel ring i's consumer position; the peek's
// fast view (view.go) decides for ring 0 while one is out.
func (e *engine) publishLocked(i int) {
	if i == 0 && e.peek.fast {
		e.publishPastPeekLocked()
		return
	}
	e.consumers[i].publish()
}

// publishPastPeekLocked is publishLocked for ring 0 while a fast view is out.
func (e *engine) publishPastPeekLocked() {
	e.peek.publishPastLocked(&e.consumers[0], &e.core)
}

// settlePeekLocked is peekView.settleLocked for the engine's view.
func (e *engine) settlePeekLocked(takeOver bool) bool {
	return e.peek.settleLocked(&e.consumers[0], &e.core, takeOver)
}
