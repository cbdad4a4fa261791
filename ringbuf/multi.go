package ringbuf

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// MultiReader reads several ring buffer maps as one stream, as libbpf's
// ring_buffer does with ring_buffer__add: tools that give each CPU a ring
// of its own (so producers do not contend on one ring's lock) drain them
// all through one epoll and one loop. Each ring is read by the same engine
// as Reader, with the same contract per ring: views valid until the loop
// body returns, each record yielded once across concurrent loops, the
// kernel's consumer position of every ring published before a loop waits,
// yields an error or ends.
//
// Rings with records are served in turns: in one turn a loop takes at
// most one batch of min(size/8, 256 KiB) bytes (and the record that
// crosses that bound) from each ring, so between two batches of a busy
// ring every other ring with records gets one. Rings may differ in size.
// Records from different rings come in no particular order.
type MultiReader struct {
	mu      sync.Mutex
	rings   []*Reader
	keys    []int // Record.Ring of each ring
	poller  *epoll.Poller
	turn    atomic.Uint32 // where the next loop starts, so loops spread out
	cleanup runtime.Cleanup

	waitRules
	released bool
}

// NewMultiReader reads the ring buffer maps given, at least one. A
// record's Ring is its map's index in the list.
func NewMultiReader(maps ...*ebpf.Map) (*MultiReader, error) {
	keys := make([]int, len(maps))
	for i := range keys {
		keys[i] = i
	}
	mr, err := newMultiReader(maps, keys)
	if err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	return mr, nil
}

// NewMultiReaderFromMapOfMaps reads every ring buffer held by an array or
// hash of maps with 4-byte keys, as the program that writes to them sees
// them when the reader starts. A record's Ring is its map's key. An entry
// that is not a ring buffer is an error.
func NewMultiReaderFromMapOfMaps(outer *ebpf.Map) (*MultiReader, error) {
	if outer == nil {
		return nil, errors.New("ringbuf: nil map")
	}
	if t := outer.Type(); t != ebpf.ArrayOfMaps && t != ebpf.HashOfMaps {
		return nil, fmt.Errorf("ringbuf: map type %s is not %s or %s", t, ebpf.ArrayOfMaps, ebpf.HashOfMaps)
	}
	if outer.KeySize() != 4 {
		return nil, fmt.Errorf("ringbuf: map of maps with %d-byte keys: want 4", outer.KeySize())
	}
	var (
		maps    []*ebpf.Map
		keys    []int
		key, id uint32
	)
	defer func() {
		for _, m := range maps {
			m.Close() // the reader holds its own references: the mappings
		}
	}()
	// Values read from user space are the inner maps' IDs.
	entries := outer.Iterate()
	for entries.Next(&key, &id) {
		inner, err := ebpf.NewMapFromID(ebpf.MapID(id))
		if err != nil {
			return nil, fmt.Errorf("ringbuf: map of maps entry %d: %w", key, err)
		}
		maps, keys = append(maps, inner), append(keys, int(key))
		if inner.Type() != ebpf.RingBuf {
			return nil, fmt.Errorf("ringbuf: map of maps entry %d holds a %s, not a %s", key, inner.Type(), ebpf.RingBuf)
		}
	}
	if err := entries.Err(); err != nil {
		return nil, fmt.Errorf("ringbuf: read map of maps: %w", err)
	}
	mr, err := newMultiReader(maps, keys)
	if err != nil {
		return nil, fmt.Errorf("ringbuf: map of maps: %w", err)
	}
	return mr, nil
}

func newMultiReader(maps []*ebpf.Map, keys []int) (_ *MultiReader, err error) {
	if len(maps) == 0 {
		return nil, errors.New("no ring buffers to read")
	}
	poller, err := epoll.New()
	if err != nil {
		return nil, err
	}
	mr := &MultiReader{poller: poller, keys: keys}
	defer func() {
		if err != nil {
			err = errors.Join(err, mr.free())
		}
	}()
	for i, m := range maps {
		mapping, rg, err := mapRingMap(m)
		if err != nil {
			return nil, fmt.Errorf("ring %d: %w", keys[i], err)
		}
		r, err := newReader(rg, &resources{mapping: mapping})
		if err != nil {
			mapping.unmap()
			return nil, fmt.Errorf("ring %d: %w", keys[i], err)
		}
		mr.rings = append(mr.rings, r)
		if err := poller.AddEdgeTriggered(m.FD()); err != nil {
			return nil, fmt.Errorf("ring %d: %w", keys[i], err)
		}
	}
	mr.cleanup = runtime.AddCleanup(mr, func(mr multiResources) { mr.free() },
		multiResources{mr.rings, mr.poller})
	return mr, nil
}

// multiResources are what a MultiReader holds outside Go's heap; a
// MultiReader nobody closes frees them from a cleanup.
type multiResources struct {
	rings  []*Reader
	poller *epoll.Poller
}

func (res multiResources) free() error {
	errs := []error{res.poller.Close()}
	for _, r := range res.rings {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// free releases what a MultiReader that failed to start holds.
func (mr *MultiReader) free() error {
	mr.released = true
	return multiResources{mr.rings, mr.poller}.free()
}

// Rings returns how many rings the MultiReader reads.
func (mr *MultiReader) Rings() int { return len(mr.rings) }

// SetDeadline is Reader.SetDeadline for every ring at once.
func (mr *MultiReader) SetDeadline(t time.Time) {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	mr.deadline = t
	mr.wakeLocked()
}

// Flush is Reader.Flush for every ring at once: loops in progress (or the
// next one) return what the rings hold, then ErrFlushed.
func (mr *MultiReader) Flush() error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if err := mr.flushLocked(); err != nil {
		return err
	}
	mr.wakeLocked()
	return nil
}

// Close is Reader.Close for every ring at once.
func (mr *MultiReader) Close() error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.closed {
		return nil
	}
	mr.closed = true
	mr.cleanup.Stop()
	var errs []error
	for _, r := range mr.rings {
		errs = append(errs, r.Close()) // publishes; unmaps once no body runs
	}
	mr.wakeLocked()
	return errors.Join(append(errs, mr.releaseLocked())...)
}

// releaseLocked closes the poller of a closed MultiReader nobody waits on.
func (mr *MultiReader) releaseLocked() error {
	if !mr.closed || mr.released || mr.waiters > 0 {
		return nil
	}
	mr.released = true
	return mr.poller.Close()
}

func (mr *MultiReader) wakeLocked() {
	if mr.waiters > 0 && !mr.wakePending && !mr.released {
		if err := mr.poller.Wake(); err == nil {
			mr.wakePending = true
		}
	}
}

// Records returns an iterator over the records of every ring, consumed in
// place, with Reader.Records' contract; rec.Ring says where each came
// from. Several goroutines may range over it at once.
func (mr *MultiReader) Records() iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		var (
			rec  Record
			cur  multiBatch
			op   waitState
			busy bool
		)
		if err := mr.beginLoop(); err != nil {
			yield(nil, err)
			return
		}
		defer mr.endLoop(&cur)
		first := int(mr.turn.Add(1))
		for {
			progress := false
			for k := range mr.rings {
				i := (first + k) % len(mr.rings)
				r := mr.rings[i]
				ok, ringBusy, err := r.tryBatch(&cur.b)
				if err != nil {
					if errors.Is(err, ErrClosed) {
						break // the turn ends; wait reports it
					}
					yield(nil, fmt.Errorf("ring %d: %w", mr.keys[i], err))
					return
				}
				busy = busy || ringBusy
				if !ok {
					continue
				}
				cur.r, rec.Ring = r, mr.keys[i]
				from := cur.b.pos
				if !r.yieldBatch(&cur.b, &rec, r.batchBytes, yield) {
					return
				}
				progress = progress || cur.b.pos > from
				busy = busy || cur.b.busy
				r.finishBatch(&cur.b)
				cur.r = nil
			}
			first++
			if !progress {
				if err := mr.wait(&op, busy); err != nil {
					yield(nil, err)
					return
				}
			}
			busy = false
		}
	}
}

// multiBatch is a MultiReader loop's batch and the ring it belongs to.
type multiBatch struct {
	r *Reader
	b batch
}

func (mr *MultiReader) beginLoop() error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.closed {
		return ErrClosed
	}
	mr.active++
	for _, r := range mr.rings {
		r.mu.Lock()
		r.active++ // so a ring read by one loop is claimed without a walk
		r.mu.Unlock()
	}
	return nil
}

// endLoop ends a loop however it stops: its batch is released and every
// ring's consumer position published.
func (mr *MultiReader) endLoop(cur *multiBatch) {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	mr.active--
	for _, r := range mr.rings {
		r.mu.Lock()
		if r == cur.r && cur.b.holding {
			r.finishBatchLocked(&cur.b)
		}
		r.active--
		r.publishLocked()
		r.releaseResourcesLocked()
		r.mu.Unlock()
	}
	mr.releaseLocked()
}

// tryBatch claims a batch for a MultiReader loop without waiting.
func (r *Reader) tryBatch(b *batch) (ok, busy bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false, false, ErrClosed
	}
	c, _, _, ok, busy, err := r.claimLocked(false, false)
	if ok {
		*b = batch{claim: c, pos: c.start, producer: r.producerPos, holding: true}
		r.users++
	}
	return ok, busy, err
}

// finishBatch releases a MultiReader loop's batch, the rest of it given
// back, and publishes once a batch of consumed space has piled up.
func (r *Reader) finishBatch(b *batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finishBatchLocked(b)
	if b.err != nil && r.err == nil {
		r.err = b.err
	}
	if r.consumerPos-r.publishedPos >= r.batchBytes {
		r.publishLocked()
	}
}

// wait publishes every ring, then waits until one may have records, with
// Reader.waitLocked's rules for Close, Flush, deadlines and busy records.
func (mr *MultiReader) wait(op *waitState, busy bool) error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	pinned := false
	for _, r := range mr.rings {
		r.mu.Lock()
		r.publishLocked()
		pinned = pinned || r.consumerPos != r.claimPos
		r.mu.Unlock()
	}
	timeout, err := mr.timeoutLocked()
	if err != nil {
		return err
	}
	if busy {
		op.busyWaits++
		timeout = busyBackoff(op.busyWaits, timeout)
	} else {
		op.busyWaits = 0
		if mr.anyReady() {
			return nil
		}
		if pinned && (timeout < 0 || timeout > heldClaimPoll) {
			timeout = heldClaimPoll
		}
	}
	mr.waiters++
	mr.mu.Unlock()
	if timeout != 0 {
		err = mr.poller.Wait(timeout)
	} else {
		runtime.Gosched()
	}
	mr.mu.Lock()
	mr.waiters--
	if mr.waiters == 0 && mr.wakePending && !mr.closed {
		mr.poller.Drain()
		mr.wakePending = false
	}
	if mr.closed {
		return errors.Join(ErrClosed, mr.releaseLocked())
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = nil // the next turn returns records first, then the deadline
	}
	return err
}

// anyReady reports whether a ring has records past its claims, or claims
// given back: records committed since the last turn may have woken nobody.
func (mr *MultiReader) anyReady() bool {
	for _, r := range mr.rings {
		producer := atomic.LoadUint64(r.ring.producerPos)
		r.mu.Lock()
		ready := producer != r.claimPos || r.claims.returned > 0
		r.mu.Unlock()
		if ready {
			return true
		}
	}
	return false
}
