package ringbuf

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

var (
	// ErrClosed is returned by reads and iterations on a closed Reader. It
	// is cilium/ebpf's ringbuf.ErrClosed (os.ErrClosed).
	ErrClosed = upstream.ErrClosed
	// ErrFlushed is returned by a read or iteration that Flush interrupted,
	// once every record that was in the ring has been returned. It is
	// cilium/ebpf's ringbuf.ErrFlushed, so errors.Is matches either.
	ErrFlushed = upstream.ErrFlushed
	// ErrCorrupt is returned when the ring's positions or a record header
	// contradict the kernel's layout. The Reader stops at the bad record.
	ErrCorrupt = errors.New("ring buffer corrupt")
	// ErrNotPeeked is returned by Consume when no record is peeked.
	ErrNotPeeked = errors.New("no record peeked")
)

// maxUnpublished bounds the consumed bytes a Records loop may keep from
// the kernel while it runs, and the batch a loop claims when others read
// too: a quarter of a megabyte keeps a batch in L2 and costs one lock per
// thousands of small records, while a ring smaller than 2 MiB gives up at
// most an eighth of its space to batching.
const maxUnpublished = 256 << 10

// Record is a sample read from the ring buffer.
type Record struct {
	// RawSample is the record's payload, as long as the producer reserved.
	// From Read and ReadInto it is a copy owned by the caller; from Peek,
	// PeekInto and Records it aliases the ring and is valid only as long as
	// those methods say.
	RawSample []byte
	// Remaining is the minimum number of bytes left in the ring after
	// this record.
	Remaining int
	// Ring is the ring the record came from when a MultiReader read it:
	// its map's index in NewMultiReader's list, or its key in the map of
	// maps. It is 0 from a Reader.
	Ring int
}

// Reader reads records from a BPF_MAP_TYPE_RINGBUF map.
//
// Read and ReadInto copy each record and may be called from several
// goroutines. Peek, PeekInto and Consume hand out a view into the ring and
// serve one goroutine at a time. Records may be ranged over by several
// goroutines at once. SetDeadline, Flush, Close, BufferSize and
// AvailableBytes may be called from any goroutine at any time. One Reader
// per map at a time: a Reader opened after another was closed starts
// where the kernel's consumer position says.
type Reader struct {
	mu      sync.Mutex
	ring    *ring
	res     *resources
	cleanup runtime.Cleanup
	err     error // sticky: a corrupt ring stays corrupt

	consumerPos  uint64 // space below is released by this reader
	claimPos     uint64 // records below are handed to a caller
	publishedPos uint64 // consumer position the kernel has from us
	producerPos  uint64 // producer position last read
	batchBytes   uint64
	claims       claimQueue
	peek         peekState

	// The peeker's batch (peek.go): the claim, under mu, while it lives;
	// what a revoke left held for the peeker; whether the peeker holds a
	// view or a batch, counted in users; and the two atomics it meets a
	// revoker with.
	peekBatch     claim
	peekBatchLive bool
	peekLeft      claim
	peekUser      bool
	peekCursor    atomic.Uint64
	peekRevoked   atomic.Bool

	waitRules
	users      int         // loop bodies and peek views using the mapping outside mu
	closedFlag atomic.Bool // closed, readable without mu by running loops
	released   bool        // resources freed

}

// resources are what a Reader holds outside Go's heap. A Reader that is
// never closed frees them from a cleanup.
type resources struct {
	mapping *mapping
	poller  *epoll.Poller
}

func (res *resources) free() error {
	var err error
	if res.poller != nil {
		err = res.poller.Close()
		res.poller = nil
	}
	return errors.Join(err, res.mapping.unmap())
}

// NewReader creates a Reader for a ring buffer map. It starts at the
// consumer position the map holds, so a pinned or reused ring is read from
// where its last reader stopped.
func NewReader(m *ebpf.Map) (*Reader, error) {
	mapping, rg, err := mapRingMap(m)
	if err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	poller, err := epoll.New()
	if err == nil {
		err = poller.AddEdgeTriggered(m.FD())
		if err != nil {
			poller.Close()
		}
	}
	if err != nil {
		mapping.unmap()
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	r, err := newReader(rg, &resources{mapping, poller})
	if err != nil {
		return nil, errors.Join(err, poller.Close(), mapping.unmap())
	}
	r.cleanup = runtime.AddCleanup(r, func(res *resources) { res.free() }, r.res)
	return r, nil
}

// mapRingMap checks that m is a ring buffer and maps it.
func mapRingMap(m *ebpf.Map) (*mapping, *ring, error) {
	if m == nil {
		return nil, nil, errors.New("nil map")
	}
	if m.Type() != ebpf.RingBuf {
		return nil, nil, fmt.Errorf("map type %s is not %s", m.Type(), ebpf.RingBuf)
	}
	size := uint64(m.MaxEntries())
	if size == 0 || size&(size-1) != 0 || size%uint64(os.Getpagesize()) != 0 {
		return nil, nil, fmt.Errorf("size %d is not a power-of-two number of pages", size)
	}
	return mapRing(m.FD(), size)
}

// newReader starts a Reader on a ring that is already mapped.
func newReader(rg *ring, res *resources) (*Reader, error) {
	pos := rg.loadConsumer()
	if pos%recordAlign != 0 {
		return nil, fmt.Errorf("ringbuf: %w: consumer position %d is not 8-byte aligned", ErrCorrupt, pos)
	}
	return &Reader{
		ring:         rg,
		res:          res,
		consumerPos:  pos,
		claimPos:     pos,
		publishedPos: pos,
		producerPos:  pos,
		batchBytes:   min(rg.size/8, maxUnpublished),
	}, nil
}

// BufferSize returns the size of the ring's data area in bytes.
func (r *Reader) BufferSize() int {
	return int(r.ring.size)
}

// AvailableBytes returns how many bytes of the ring this reader has not
// consumed yet. It is 0 right after the last record was read, and 0 once
// the Reader is closed.
func (r *Reader) AvailableBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0
	}
	producer := atomic.LoadUint64(r.ring.producerPos)
	// A peeker's batch publishes what it consumes without telling mu.
	consumed := max(r.consumerPos, r.ring.loadConsumer())
	if producer < consumed {
		return 0
	}
	return int(producer - consumed)
}

// SetDeadline sets when blocked reads and loops give up with
// os.ErrDeadlineExceeded. Records already in the ring are returned first.
// The zero time removes the deadline. It takes effect at once, also for
// reads that are already waiting.
func (r *Reader) SetDeadline(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadline = t
	r.wakeWaitersLocked()
}

// waitRules is what ends a wait, shared by Reader and MultiReader and
// guarded by the owner's mutex.
type waitRules struct {
	deadline     time.Time
	flushPending int // reads still to end with ErrFlushed
	active       int // reads and loops in progress
	waiters      int // goroutines sleeping outside the mutex
	wakePending  bool
	closed       bool
}

// flushLocked is Flush's bookkeeping.
func (w *waitRules) flushLocked() error {
	if w.closed {
		return ErrClosed
	}
	w.flushPending = max(w.flushPending, w.active, 1)
	return nil
}

// timeoutLocked returns how long a wait may sleep (negative: no limit),
// or the error that ends it instead: ErrClosed, ErrFlushed (one per
// pending flush), os.ErrDeadlineExceeded.
func (w *waitRules) timeoutLocked() (time.Duration, error) {
	switch {
	case w.closed:
		return 0, ErrClosed
	case w.flushPending > 0:
		w.flushPending--
		return 0, ErrFlushed
	case w.deadline.IsZero():
		return -1, nil
	}
	if timeout := time.Until(w.deadline); timeout > 0 {
		return timeout, nil
	}
	return 0, os.ErrDeadlineExceeded
}

// Flush makes reads and loops in progress stop waiting: they return the
// records in the ring, then ErrFlushed. As many reads and loops end so as
// were in progress, or, with none in progress, the next one to find the
// ring empty. Use it to drain records submitted with BPF_RB_NO_WAKEUP,
// which wake no reader.
func (r *Reader) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.flushLocked(); err != nil {
		return err
	}
	r.wakeWaitersLocked()
	return nil
}

// Close stops the Reader: every blocked read and loop returns ErrClosed.
// It may be called from any goroutine and more than once. What was
// consumed is published first; the kernel's consumer position never moves
// back. The ring stays mapped until the last running loop body returns
// (what it consumed is published then); a view still held from Peek reads
// zeros from then on, until Consume releases it.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.revokePeekLocked()
	r.publishLocked()
	r.closed = true
	r.closedFlag.Store(true)
	r.cleanup.Stop()
	r.wakeWaitersLocked()
	return r.releaseResourcesLocked()
}

// releaseResourcesLocked frees the mapping and the poller of a closed
// Reader once nobody uses them.
func (r *Reader) releaseResourcesLocked() error {
	if !r.closed || r.released || r.waiters > 0 {
		return nil
	}
	switch {
	case r.users == 0:
		r.released = true
		return r.res.free()
	case r.users == 1 && r.peekUser && r.res.poller != nil:
		// Only a peek view is left: nobody may read the ring any more,
		// but the view must not fault. Blank it and free the kernel ring.
		err := r.res.poller.Close()
		r.res.poller = nil
		return errors.Join(err, r.res.mapping.blank())
	}
	return nil
}
