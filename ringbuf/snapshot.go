package ringbuf

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cilium/ebpf"
)

// ErrConcurrentSnapshot is yielded, alone, by a [SnapshotReader.Snapshot]
// loop started while another of the same reader runs.
var ErrConcurrentSnapshot = errors.New("concurrent use of Snapshot: another snapshot loop of this reader runs")

// snapshotAttempts bounds the copies of one snapshot (take). Not tuned: a
// copy is taken again only when the producer overwrote the headers it
// walked, and a snapshot that gives up hands out nothing, for the next.
const snapshotAttempts = 4

var snapshotCopied func() // set by tests: runs between a copy and its re-check

// SnapshotReader reads an overwrite-mode ring buffer (BPF_F_RB_OVERWRITE,
// Linux 6.19+), whose producer overwrites the oldest records when the ring
// is full. Each [SnapshotReader.Snapshot] copies out the records no earlier
// one handed out; one overwritten while copied is dropped, never handed out
// torn, and counted in [SnapshotReader.Stats]. One snapshot loop runs at a
// time; Stats and Close may be called at any time, from a loop body too.
type SnapshotReader struct {
	mu           sync.Mutex // guards the mapping and stats, and next but for a loop's moves
	mapping      *mapping   // nil once closed
	ring         *ring
	overwritePos position
	// next: records before it were handed out or lost; closedBit once
	// closed, so that a loop's compare-and-swap past a record fails.
	next    atomic.Uint64
	stats   SnapshotStats
	cleanup runtime.Cleanup

	copied     []byte        // the running snapshot's copy of the ring
	copiedFrom uint64        // the position of copied[0]
	fence      atomic.Uint64 // a read-modify-write between a copy and its re-check
	inLoop     atomic.Bool   // a Snapshot loop runs
}

const closedBit = 1 // in next, which is 8-byte aligned

// SnapshotStats counts what a [SnapshotReader] handed out and lost. With
// records of one size, Records + LostBytes/size is the number of records
// committed up to the last snapshot's end.
type SnapshotStats struct {
	// Records is the number of records handed out.
	Records uint64
	// LostBytes is how far the overwrite position moved past the position
	// handed out up to: the space, headers and padding too, of the records
	// (discarded ones too) overwritten before a snapshot handed them out.
	LostBytes uint64
	// Torn is the number of records overwritten while a snapshot copied
	// them: dropped, their space in LostBytes.
	Torn uint64
}

// NewSnapshotReader maps m, an overwrite-mode ring buffer, starting after
// the records an earlier reader handed out (the consumer position). A ring
// without BPF_F_RB_OVERWRITE gives an error wrapping [ebpf.ErrNotSupported],
// a closed map one wrapping [syscall.EBADF].
func NewSnapshotReader(m *ebpf.Map) (*SnapshotReader, error) {
	mp, rg, err := mapRingMap(m, true)
	if err != nil {
		return nil, err
	}
	r, err := newSnapshotReader(mp, rg)
	if err != nil {
		return nil, errors.Join(err, mp.unmap())
	}
	return r, nil
}

func newSnapshotReader(mp *mapping, rg *ring) (*SnapshotReader, error) {
	next, err := rg.startPos()
	if err != nil {
		return nil, err
	}
	r := &SnapshotReader{mapping: mp, ring: rg, overwritePos: rg.overwritePosition()}
	r.next.Store(next)
	r.cleanup = runtime.AddCleanup(r, func(mp *mapping) { mp.unmap() }, mp)
	return r, nil
}

// Snapshot returns a loop over the records no earlier snapshot handed out,
// in the order reserved, copied when the loop starts; records committed
// later, and those from a record still being written on, wait for the next.
// Each sample is a slice of the reader's copy, valid until the body returns.
// A record counts as handed out when yielded: those after a break stay for
// the next snapshot, unless overwritten first. An error ends the loop as its
// last pair: [ErrClosed] once closed (also from the body),
// [ErrConcurrentSnapshot], or [ErrCorrupt] after the records before a bad
// header, where every snapshot stops.
func (r *SnapshotReader) Snapshot() iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if !r.inLoop.CompareAndSwap(false, true) {
			yield(nil, ErrConcurrentSnapshot)
			return
		}
		defer r.inLoop.Store(false)
		start, end, err := r.take()
		if err != nil && start == end {
			yield(nil, err)
			return
		}
		pos, records := start, uint64(0)
		defer func() { r.handedOut(records) }()
		for pos != end {
			off := pos - r.copiedFrom
			h := header(*(*uint32)(unsafe.Pointer(&r.copied[off])))
			// One compare-and-swap a record, failing once closed
			// (BenchmarkSnapshotFakeRing): a batch's would let Close publish
			// records not handed out.
			if !r.next.CompareAndSwap(pos, pos+h.total()) {
				yield(nil, ErrClosed)
				return
			}
			pos += h.total()
			if h.discarded() {
				continue
			}
			records++
			if !yield(r.copied[off+headerSize:off+headerSize+uint64(h.length()):off+headerSize+uint64(h.length())], nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err) // the bad header at end
		}
	}
}

// Stats returns what the reader handed out and lost so far.
func (r *SnapshotReader) Stats() SnapshotStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Close unmaps the ring, waiting only for a copy in progress; a running loop
// ends with [ErrClosed] at its next record. It first publishes the position
// handed out up to, so that no later SnapshotReader of the map hands those
// records out again. A second Close returns nil.
func (r *SnapshotReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := r.next.Or(closedBit) // under mu: take stores next only while open
	if next&closedBit != 0 {
		return nil
	}
	r.cleanup.Stop()
	r.ring.publishConsumer(next)
	mp := r.mapping
	r.mapping, r.ring = nil, nil
	return mp.unmap()
}

// take copies into r.copied the records from next to the first busy one or
// the producer, and returns the range copied intact (with ErrCorrupt if a
// bad header ends it), or an empty one with the error that ends the
// snapshot. The fence orders the copy before the re-load of the overwrite
// position; what it passed is dropped, and the rest kept only if the walk
// landed on it, else copied again (docs/ringbuf.md, "Never torn").
func (r *SnapshotReader) take() (start, end uint64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ring == nil {
		return 0, 0, ErrClosed
	}
	for range snapshotAttempts {
		next := r.next.Load()
		producer := r.ring.producerPos.load(next)
		overwrite := r.overwritePos.load(next)
		if int64(producer-overwrite) > int64(r.ring.size) || producer%recordAlign != 0 || overwrite%recordAlign != 0 {
			return 0, 0, fmt.Errorf("%w: producer position %d, overwrite position %d, ring of %d bytes",
				ErrCorrupt, producer, overwrite, r.ring.size)
		}
		r.skipToLocked(overwrite)
		start = r.next.Load()
		if int64(producer-start) > int64(r.ring.size) { // overwrite ahead of producer
			return 0, 0, fmt.Errorf("%w: producer position %d, overwrite position %d, %d bytes past the position handed out up to, %d",
				ErrCorrupt, producer, overwrite, producer-start, start)
		}
		r.copiedFrom = start
		end, corrupt := r.copyLocked(start, producer)
		if snapshotCopied != nil {
			snapshotCopied()
		}
		r.fence.Add(1)
		overwritten := r.overwritePos.load(start)
		if overwritten%recordAlign != 0 { // it must not become next (closedBit)
			return 0, 0, fmt.Errorf("%w: overwrite position %d is not 8-byte aligned", ErrCorrupt, overwritten)
		}
		if int64(overwritten-start) <= 0 {
			return start, end, corrupt
		}
		landed := r.dropTornLocked(start, end, overwritten)
		r.skipToLocked(overwritten)
		if landed { // a bad header is past the overwrite position: not one rewritten
			return overwritten, end, corrupt
		}
	}
	next := r.next.Load()
	return next, next, nil
}

// copyLocked copies records from start up to producer or a busy or bad one.
func (r *SnapshotReader) copyLocked(start, producer uint64) (end uint64, err error) {
	rg := r.ring
	if n := producer - start; int64(n) > 0 && uint64(cap(r.copied)) < n {
		r.copied = make([]byte, n, max(n, min(2*uint64(cap(r.copied)), rg.size)))
	}
	r.copied = r.copied[:cap(r.copied)]
	pos := start
	for int64(producer-pos) > 0 {
		h := rg.headerAt(pos)
		if h.busy() {
			break
		}
		if h.total() > producer-pos {
			return pos, rg.corrupt(pos, producer, h)
		}
		off := pos - start
		*(*uint32)(unsafe.Pointer(&r.copied[off])) = uint32(h)
		if !h.discarded() {
			copy(r.copied[off+headerSize:], rg.sample(pos, h.length()))
		}
		pos += h.total()
	}
	return pos, nil
}

// dropTornLocked counts the records copied before overwritten as torn, and
// reports whether the walk along their headers landed on it.
func (r *SnapshotReader) dropTornLocked(start, end, overwritten uint64) (landed bool) {
	pos := start
	for int64(overwritten-pos) > 0 && int64(end-pos) > 0 {
		h := header(*(*uint32)(unsafe.Pointer(&r.copied[pos-start])))
		if !h.discarded() {
			r.stats.Torn++
		}
		pos += h.total()
	}
	return pos == overwritten
}

func (r *SnapshotReader) skipToLocked(pos uint64) {
	if lost := pos - r.next.Load(); int64(lost) > 0 {
		r.stats.LostBytes += lost
		r.next.Store(pos)
	}
}

// handedOut counts a loop's records and publishes next (BPF_RB_AVAIL_DATA, poll).
func (r *SnapshotReader) handedOut(records uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Records += records
	if r.ring != nil {
		r.ring.publishConsumer(r.next.Load())
	}
}
