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

// rings is a consumer per ring under one engine: Reader, MultiReader and
// RawReader.
type rings struct {
	engine    readers.Engine
	consumers []consumer
	keys      []int // Record.Ring of each consumer's ring (MultiReader); nil for a Reader
}

// resources are what rings or a Writer hold outside Go's heap.
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

func (res *resources) closePoller() (err error) {
	if res.poller != nil {
		err, res.poller = res.poller.Close(), nil
	}
	return err
}

// open maps and polls the maps and starts rs on them; keys are their
// Record.Ring (nil for a Reader).
func (rs *rings) open(maps []*ebpf.Map, keys []int) (err error) {
	rs.keys = keys
	res := &resources{}
	defer func() {
		if err != nil {
			err = errors.Join(err, res.free())
		}
	}()
	mapped := make([]*ring, len(maps))
	for i, m := range maps {
		var mp *mapping
		if mp, mapped[i], err = mapRingMap(m, false); err != nil {
			return rs.ringErr(i, err)
		}
		res.mappings = append(res.mappings, mp)
	}
	if res.poller, err = epoll.New(); err != nil {
		return err
	}
	for i, m := range maps {
		if err := res.poller.AddEdgeTriggered(m.FD()); err != nil {
			return rs.ringErr(i, err)
		}
	}
	return rs.start(mapped, res)
}

func (rs *rings) start(mapped []*ring, res *resources) error {
	for _, rg := range mapped {
		pos, err := rg.startPos()
		if err != nil {
			return err
		}
		rs.consumers = append(rs.consumers, newConsumer(rg, pos))
	}
	rs.engine.Init((*engineBuffers)(rs), res.poller, ErrFlushed, res.free, heldClaimPoll)
	return nil
}

// mapRingMap maps m, refusing it unless its overwrite mode is overwrite.
func mapRingMap(m *ebpf.Map, overwrite bool) (*mapping, *ring, error) {
	if err := checkMap(m); err != nil {
		return nil, nil, err
	}
	if err := requireMapped(m.Type(), runtime.GOOS); err != nil {
		return nil, nil, err
	}
	switch isOverwrite := m.Flags()&rbOverwrite != 0; {
	case isOverwrite && !overwrite:
		return nil, nil, fmt.Errorf("%v is an overwrite-mode ring buffer (BPF_F_RB_OVERWRITE), which its producer overwrites: read it with NewSnapshotReader: %w", m, ebpf.ErrNotSupported)
	case !isOverwrite && overwrite:
		return nil, nil, fmt.Errorf("%v is not an overwrite-mode ring buffer (no BPF_F_RB_OVERWRITE): read it with NewReader: %w", m, ebpf.ErrNotSupported)
	}
	size, err := ringSize(m)
	if err != nil {
		return nil, nil, err
	}
	return mapRing(m.FD(), size, false)
}

// heldClaimPoll bounds a wait while a claim is held, as the kernel wakes
// only a reader that caught up. Not tuned (BenchmarkWakeBehindHeldView).
const heldClaimPoll = time.Millisecond

// engineBuffers is rings as readers.Buffers, its methods kept off the readers.
type engineBuffers rings

func (b *engineBuffers) Len() int         { return len(b.consumers) }
func (b *engineBuffers) Publish(i int)    { b.consumers[i].publish() }
func (b *engineBuffers) Ready(i int) bool { return b.consumers[i].ready() }
func (b *engineBuffers) Err(i int) error  { return (*rings)(b).ringErr(i, b.consumers[i].err) }

// ringErr names the ring an error came from, when there are several.
func (rs *rings) ringErr(i int, err error) error {
	if rs.keys == nil || err == nil {
		return err
	}
	return fmt.Errorf("ring %d: %w", rs.keys[i], err)
}

func (rs *rings) readinessFD() (int, error) {
	fd, err := rs.engine.ReadinessFD()
	if err != nil {
		return -1, fmt.Errorf("ringbuf: readiness descriptor: %w", err)
	}
	return fd, nil
}
