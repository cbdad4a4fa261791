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
// loop started while another one of the same reader runs (from another
// goroutine, or from its own body); nothing is handed out.
var ErrConcurrentSnapshot = errors.New("concurrent use of Snapshot: another snapshot loop of this reader runs")

// snapshotAttempts bounds the copies one snapshot takes when the producer
// overwrote, during a copy, the very headers the copy walked (see take).
const snapshotAttempts = 4

// snapshotCopied, which only tests set, runs between a snapshot's copy and
// its re-check: where a producer's overwrite tears a copy.
var snapshotCopied func()

// SnapshotReader reads an overwrite-mode ring buffer: a BPF_MAP_TYPE_RINGBUF
// created with BPF_F_RB_OVERWRITE (Linux 6.19+), whose producer overwrites
// the oldest records when the ring is full instead of failing. Such rings
// serve fault diagnosis: the producers commit with BPF_RB_NO_WAKEUP, and
// user space takes a snapshot when something happens. [NewReader] and the
// other readers refuse them.
//
// Each [SnapshotReader.Snapshot] hands out the records the ring holds that
// no earlier snapshot handed out, oldest first, as copies: a record the
// producer overwrote while it was copied is dropped, never handed out
// torn, and counted in [SnapshotReader.Stats].
//
// A SnapshotReader may be used by several goroutines, one snapshot loop at
// a time: a second loop gets [ErrConcurrentSnapshot]. Stats and Close may
// be called at any time from any goroutine, a loop body included.
type SnapshotReader struct {
	mu           sync.Mutex // guards the mapping and stats; next too, but for a running loop's moves
	mapping      *mapping   // nil once closed
	ring         *ring
	overwritePos position
	// next is the position before which records were handed out, or
	// lost, with closedBit once Close ran. A loop moves it past each
	// record before it hands the record out, with a compare-and-swap that
	// fails once closedBit is set: Close learns at once, whatever the
	// instant, which records were handed out, and publishes them.
	next    atomic.Uint64
	stats   SnapshotStats
	cleanup runtime.Cleanup

	copied     []byte        // the running snapshot's copy of the ring, owned by the loop
	copiedFrom uint64        // the position of copied[0]
	fence      atomic.Uint64 // a read-modify-write between a copy and its re-check
	inLoop     atomic.Bool   // a Snapshot loop runs
}

// closedBit marks next once the reader is closed: the positions next
// takes are 8-byte aligned (newSnapshotReader and take check each), so
// their lowest bit is free.
const closedBit = 1

// SnapshotStats counts what a [SnapshotReader] handed out and what it lost.
// With records of one size, Records plus LostBytes over that size is the
// number of records the producer committed up to the last snapshot's end.
type SnapshotStats struct {
	// Records is the number of records handed out.
	Records uint64
	// LostBytes is the ring space, headers and padding included, of the
	// records the producer overwrote before a snapshot handed them out:
	// the distance the kernel's overwrite position moved past the position
	// up to which records were handed out. Discarded records inside it
	// count too: the positions cannot tell them apart.
	LostBytes uint64
	// Torn is the number of records a snapshot had copied when it found
	// that the producer overwrote them during the copy. They were dropped;
	// their space is in LostBytes.
	Torn uint64
}

// NewSnapshotReader maps m, an overwrite-mode ring buffer, for snapshots.
// It starts after the records an earlier reader of m handed out (the
// kernel's consumer position). A ring created without BPF_F_RB_OVERWRITE
// is refused with an error wrapping [ebpf.ErrNotSupported]: read it with
// [NewReader]. A closed map is refused with one wrapping
// [syscall.EBADF], as NewReader refuses it.
func NewSnapshotReader(m *ebpf.Map) (*SnapshotReader, error) {
	if err := checkMap(m); err != nil {
		return nil, err
	}
	if err := requireMapped(m.Type(), runtime.GOOS); err != nil {
		return nil, err
	}
	if m.Flags()&rbOverwrite == 0 {
		return nil, fmt.Errorf("%v is not an overwrite-mode ring buffer (no BPF_F_RB_OVERWRITE): read it with NewReader: %w", m, ebpf.ErrNotSupported)
	}
	size, err := ringSize(m)
	if err != nil {
		return nil, err
	}
	mp, rg, err := mapRing(m.FD(), size, false)
	if err != nil {
		return nil, err
	}
	r, err := newSnapshotReader(mp, rg)
	if err != nil {
		return nil, errors.Join(err, mp.unmap())
	}
	return r, nil
}

// newSnapshotReader starts a SnapshotReader on rg, mapped by mp, at the
// kernel's consumer position.
func newSnapshotReader(mp *mapping, rg *ring) (*SnapshotReader, error) {
	next := rg.loadConsumer()
	if next%recordAlign != 0 {
		return nil, fmt.Errorf("%w: consumer position %d is not 8-byte aligned", ErrCorrupt, next)
	}
	r := &SnapshotReader{mapping: mp, ring: rg, overwritePos: rg.overwritePosition()}
	r.next.Store(next)
	r.cleanup = runtime.AddCleanup(r, func(mp *mapping) { mp.unmap() }, mp)
	return r, nil
}

// Snapshot returns a loop over the records the ring holds that no earlier
// snapshot handed out, oldest first: in the order the producers reserved
// them, so each CPU's in the order it produced them. The copy is taken
// when the loop starts; records committed after it wait for the next
// snapshot, and so does a record still being written, with those after it.
//
// Each sample is a slice of the reader's copy, valid until the body
// returns. A record counts as handed out when it is yielded: the records
// after a break stay for the next snapshot, unless the producer overwrites
// them first. An error ends the loop as its last pair: [ErrClosed] once
// the reader is closed (Close from the body ends the loop),
// [ErrConcurrentSnapshot], or [ErrCorrupt] if the positions or a header
// contradict the kernel's layout (after the records before a bad header:
// each snapshot stops there).
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
			// Handed out from here on, unless Close came first. One
			// compare-and-swap a record, about a quarter of its time
			// (BenchmarkSnapshotFakeRing): one a batch would have Close
			// publish records not yet handed out, lost to the next reader.
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

// Close unmaps the ring. A snapshot loop running ends with [ErrClosed] at
// its next record; Close waits only for a copy in progress. Before it
// unmaps, it publishes the position up to which records were handed out,
// the running loop's included, so that the next SnapshotReader of the map
// hands none of them out again. Closing twice returns nil.
func (r *SnapshotReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Under mu: take stores next only while the reader is open.
	next := r.next.Or(closedBit)
	if next&closedBit != 0 {
		return nil
	}
	r.cleanup.Stop()
	r.ring.publishConsumer(next)
	mp := r.mapping
	r.mapping, r.ring = nil, nil
	return mp.unmap()
}

// take copies the records from the handed-out position to the first busy
// one (or the producer position) into r.copied, and returns the range of
// positions whose records it copied intact, with ErrCorrupt if a bad
// header ends it; or an empty range with the error that ends the
// snapshot.
//
// The copy walks the ring's headers, loading each before its payload. Then
// a read-modify-write orders the copy's loads before a new load of the
// overwrite position: records from that position on were not overwritten
// when they were copied (ring.go). Those before it are dropped. They
// were walked along headers the producer may have rewritten, so the
// records after them are kept only if the walk landed on the overwrite
// position, which the kernel keeps on a record's start; otherwise the
// copy is taken again from there, at most snapshotAttempts times.
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
		if int64(producer-start) > int64(r.ring.size) {
			// Only if overwrite is ahead of producer but behind start: no
			// producer ever leaves the positions so.
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
		if overwritten%recordAlign != 0 {
			// Not a record's start: it must not become next (closedBit).
			return 0, 0, fmt.Errorf("%w: overwrite position %d is not 8-byte aligned", ErrCorrupt, overwritten)
		}
		if int64(overwritten-start) <= 0 {
			return start, end, corrupt
		}
		landed := r.dropTornLocked(start, end, overwritten)
		r.skipToLocked(overwritten)
		if landed {
			// The walk landed inside the copy: the bad header, if any, is
			// at or past the overwrite position, so not one the producer
			// rewrote. A copy whose bad header lies before it is taken
			// again.
			return overwritten, end, corrupt
		}
	}
	next := r.next.Load()
	return next, next, nil
}

// copyLocked copies the committed records from start to producer, or to
// the first busy or bad one, into r.copied at their offset from start, and
// returns where it stopped, with ErrCorrupt for a bad header.
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

// dropTornLocked counts the records copied from start that lie before
// overwritten, and reports whether the walk along their headers landed on
// overwritten (then the copy from there on is intact).
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

// skipToLocked moves the handed-out position to pos, if pos is past it,
// counting the space in between as lost.
func (r *SnapshotReader) skipToLocked(pos uint64) {
	if lost := pos - r.next.Load(); int64(lost) > 0 {
		r.stats.LostBytes += lost
		r.next.Store(pos)
	}
}

// handedOut counts the records a loop handed out, and tells the kernel
// the position up to which it handed them out (next), so that
// BPF_RB_AVAIL_DATA and poll count only the records not handed out. Once
// closed, Close told it.
func (r *SnapshotReader) handedOut(records uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Records += records
	if r.ring != nil {
		r.ring.publishConsumer(r.next.Load())
	}
}
