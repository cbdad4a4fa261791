package ringbuf

import (
	"errors"
	"fmt"
	"time"

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// engine is what Reader and MultiReader are made of: a consumer per ring
// and the protocol of internal/readers over them (one mutex, one waiter,
// the resources). Reads and loops claim records from the consumers, wait
// when there are none, and release what they read.
type engine struct {
	core      readers.Engine
	consumers []consumer
	keys      []int // Record.Ring of each consumer's ring (MultiReader); nil for a Reader
	res       *resources
	turn      int // the consumer the next batch is claimed from first
}

// waitState is one read's or loop's state across waits.
type waitState = readers.WaitState

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
		e.consumers = append(e.consumers, newConsumer(rg, pos))
	}
	e.keys, e.res = keys, res
	e.core.Init((*engineBuffers)(e), res.poller, ErrFlushed, res.free, heldClaimPoll)
	return nil
}

// engineBuffers is the engine as readers.Buffers sees it: a type of its
// own, so that these methods do not become the public readers' methods.
type engineBuffers engine

func (b *engineBuffers) Len() int         { return len(b.consumers) }
func (b *engineBuffers) Publish(i int)    { b.consumers[i].publish() }
func (b *engineBuffers) Ready(i int) bool { return b.consumers[i].ready() }
func (b *engineBuffers) Err(i int) error {
	if err := b.consumers[i].err; err != nil {
		return (*engine)(b).ringErr(i, err)
	}
	return nil
}

// ringErr names the ring an error came from, when there are several.
func (e *engine) ringErr(i int, err error) error {
	if e.keys == nil {
		return err
	}
	return fmt.Errorf("ring %d: %w", e.keys[i], err)
}

// heldClaimPoll bounds a wait while a claim pins a consumer position: the
// kernel wakes a reader only for a record at the position it knows, so
// records committed behind a held view wake nobody, and the claim's
// release may come late or never (a Peek view kept for long).
const heldClaimPoll = time.Millisecond
