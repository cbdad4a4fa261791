package ringbuf

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

var (
	// ErrClosed is returned by reads and iterations on a closed Reader.
	ErrClosed = os.ErrClosed
	// ErrFlushed is returned by a read or iteration that Flush interrupted,
	// once every record that was in the ring has been returned.
	ErrFlushed = errors.New("ring buffer flushed")
	// ErrCorrupt is returned when the ring's positions or a record header
	// contradict the kernel's layout. The Reader stops at the bad record.
	ErrCorrupt = errors.New("ring buffer corrupt")
	// ErrNotPeeked is returned by Consume when no record is peeked.
	ErrNotPeeked = errors.New("no record peeked")
)

// maxUnreleased bounds the consumed bytes the kernel may not have seen yet,
// and the size of the batch one Records loop claims at a time: a quarter of
// a megabyte keeps a batch in L2 and costs one lock per thousands of small
// records, while a ring smaller than 2 MiB gives up at most an eighth of
// its space to batching.
const maxUnreleased = 256 << 10

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
}

// Reader reads records from a BPF_MAP_TYPE_RINGBUF map.
//
// Read and ReadInto copy each record and may be called from several
// goroutines. Peek, PeekInto and Consume hand out a view into the ring and
// serve one goroutine at a time. Records may be ranged over by several
// goroutines at once. SetDeadline, Flush, Close, BufferSize and
// AvailableBytes may be called from any goroutine at any time.
type Reader struct {
	mu sync.Mutex

	ring    *ring
	mapping *mapping
	poller  *epoll.Poller
	err     error // sticky: a corrupt ring stays corrupt

	consumerPos  uint64 // space below is released by this reader
	claimPos     uint64 // records below are handed to a caller
	publishedPos uint64 // consumer position the kernel has seen
	producerPos  uint64 // producer position last read
	batchBytes   uint64
	claims       claimQueue

	// Peek state, written under mu and only by the peeking goroutine, so
	// that goroutine may read it without mu.
	peeked      bool // a record is peeked, counted in users
	peekInline  bool // it is [consumerPos, claimPos), not queued in claims
	peekClaim   claim
	peekPos     uint64
	peekLen     uint32
	peekRemains int

	deadline     time.Time
	flushPending int // reads still to end with ErrFlushed
	active       int // reads and loops in progress
	waiters      int // goroutines sleeping outside mu
	users        int // loops and peek views using the mapping outside mu
	wakePending  bool
	closed       bool
	closedFlag   atomic.Bool // closed, readable without mu by running loops
	released     bool

	prefetch uint64 // sink for look-ahead loads, so they are not optimised away
}

// NewReader creates a Reader for a ring buffer map. It starts at the
// consumer position the map holds, so a pinned or reused ring is read from
// where its last reader stopped.
func NewReader(m *ebpf.Map) (*Reader, error) {
	if m == nil {
		return nil, errors.New("ringbuf: nil map")
	}
	if m.Type() != ebpf.RingBuf {
		return nil, fmt.Errorf("ringbuf: map type %s is not %s", m.Type(), ebpf.RingBuf)
	}
	size := uint64(m.MaxEntries())
	if size == 0 || size&(size-1) != 0 || size%uint64(os.Getpagesize()) != 0 {
		return nil, fmt.Errorf("ringbuf: size %d is not a power-of-two number of pages", size)
	}
	mapping, rg, err := mapRing(m.FD(), size)
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
	return newReader(rg, mapping, poller)
}

// newReader starts a Reader on a ring that is already mapped.
func newReader(rg *ring, mapping *mapping, poller *epoll.Poller) (*Reader, error) {
	pos := rg.loadConsumer()
	if pos%recordAlign != 0 {
		return nil, fmt.Errorf("ringbuf: %w: consumer position %d is not 8-byte aligned", ErrCorrupt, pos)
	}
	r := &Reader{
		ring:         rg,
		mapping:      mapping,
		poller:       poller,
		consumerPos:  pos,
		claimPos:     pos,
		publishedPos: pos,
		producerPos:  pos,
		batchBytes:   min(rg.size/8, maxUnreleased),
	}
	return r, nil
}

// BufferSize returns the size of the ring's data area in bytes.
func (r *Reader) BufferSize() int {
	return int(r.ring.size)
}

// AvailableBytes returns how many bytes of the ring this reader has not
// consumed yet, whether or not it has told the kernel. It is 0 right after
// the last record was read, and 0 once the Reader is closed.
func (r *Reader) AvailableBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0
	}
	producer := atomic.LoadUint64(r.ring.producerPos)
	if producer < r.consumerPos {
		return 0
	}
	return int(producer - r.consumerPos)
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

// Flush makes reads and loops in progress stop waiting: they return the
// records in the ring, then ErrFlushed. As many reads and loops end so as
// were in progress, or, with none in progress, the next one to find the
// ring empty. Use it to drain records submitted with BPF_RB_NO_WAKEUP,
// which wake no reader.
func (r *Reader) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.flushPending = max(r.flushPending, r.active, 1)
	r.wakeWaitersLocked()
	return nil
}

// Close stops the Reader: every blocked read and loop returns ErrClosed.
// It may be called from any goroutine and more than once. The ring stays
// mapped until the last running loop body returns; a view still held from
// Peek reads zeros from then on, until Consume releases it.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.publishLocked()
	r.closed = true
	r.closedFlag.Store(true)
	if r.waiters > 0 {
		r.wakeLocked()
	}
	return r.releaseResourcesLocked()
}

// releaseResourcesLocked frees the mapping and the poller of a closed
// Reader once nobody uses them.
func (r *Reader) releaseResourcesLocked() error {
	if !r.closed || r.released || r.waiters > 0 {
		return nil
	}
	var pollErr error
	if r.poller != nil && (r.users == 0 || r.users == 1 && r.peeked) {
		pollErr = r.poller.Close()
		r.poller = nil
	}
	if r.users == 0 {
		r.released = true
		return errors.Join(pollErr, r.mapping.unmap())
	}
	if r.users == 1 && r.peeked {
		// Only a peek view is left: nobody may read the ring any more,
		// but the view must not fault. Blank it and free the kernel ring.
		return errors.Join(pollErr, r.mapping.blank())
	}
	return nil
}

// publishLocked tells the kernel how far this reader has consumed.
func (r *Reader) publishLocked() {
	if r.consumerPos != r.publishedPos && !r.closed {
		r.ring.storeConsumer(r.consumerPos)
		r.publishedPos = r.consumerPos
	}
}

func (r *Reader) wakeWaitersLocked() {
	if r.waiters > 0 {
		r.wakeLocked()
	}
}

func (r *Reader) wakeLocked() {
	if !r.wakePending && r.poller != nil {
		if err := r.poller.Wake(); err == nil {
			r.wakePending = true
		}
	}
}

// readOp is the state of one read or loop across waits.
type readOp struct {
	busyWaits int
}

func (r *Reader) beginOpLocked() readOp {
	r.active++
	return readOp{}
}

func (r *Reader) endOpLocked() {
	r.active--
}

// claimLocked hands the caller the next records. With single it claims up
// to and including the next record that is not discarded; otherwise up to
// batchBytes of records. Discarded records at the front are released on
// the way. It returns the claimed range and, for single, the record's
// position and length; ok is false if no record is ready, busy true if a
// producer is still writing the next one.
func (r *Reader) claimLocked(single bool) (c claim, recPos uint64, recLen uint32, ok, busy bool, err error) {
	r.queuePeekLocked()
	if r.err != nil {
		return claim{}, 0, 0, false, false, r.err
	}
	if i := r.claims.firstReturned(); i >= 0 {
		return r.reclaimLocked(i, single)
	}
	start := r.claimPos
	pos := start
	producer := r.producerPos
	limit := start + r.batchBytes
	var prefetch uint64
	for {
		if pos == producer {
			if producer, err = r.ring.loadProducer(r.consumerPos); err != nil {
				r.err = err
				return claim{}, 0, 0, false, false, err
			}
			r.producerPos = producer
		}
		length, total, state, err := r.ring.header(pos, producer)
		if err != nil {
			r.err = err
			break
		}
		if state == stateBusy || state == stateEmpty {
			busy = state == stateBusy
			break
		}
		// Touch the ring ahead of the walk, within what is produced: the
		// loads overlap the misses a header walk would take one by one.
		if ahead := pos + lookahead; ahead < producer && total < lookaheadBelow {
			prefetch += r.ring.touch(ahead)
		}
		recPos, recLen = pos, length
		pos += total
		if state == stateReady {
			ok = true
			if single || pos >= limit {
				break
			}
		}
	}
	r.prefetch += prefetch
	if pos == start {
		return claim{}, 0, 0, false, busy, r.err
	}
	r.claimPos = pos
	c = claim{start: start, end: pos}
	if !ok {
		// Only discarded records: give their space back now.
		r.claims.push(claim{start: start, end: pos, state: claimReleased})
		r.advanceLocked()
		return claim{}, 0, 0, false, busy, r.err
	}
	r.claims.push(c)
	return c, recPos, recLen, true, false, nil
}

// lookahead is how far ahead of the walk claimLocked and Records touch the
// ring, for records shorter than lookaheadBelow. Small records are
// latency-bound: the loads overlap the header misses. From 1 KiB on the
// touches cost more than they save (BenchmarkRead, mode=records: at
// 2048 B about 33 Mrec/s with them, 45 without).
const (
	lookahead      = 2048
	lookaheadBelow = 1024
)

// reclaimLocked hands out the returned claim at index i, or for single its
// first record that is not discarded.
func (r *Reader) reclaimLocked(i int, single bool) (c claim, recPos uint64, recLen uint32, ok, busy bool, err error) {
	c = r.claims.items[i]
	if !single {
		r.claims.setState(i, claimHeld)
		return c, 0, 0, true, false, nil
	}
	for pos := c.start; pos < c.end; {
		length, total, state, err := r.ring.header(pos, c.end)
		if err != nil {
			r.err = err
			return claim{}, 0, 0, false, false, err
		}
		pos += total
		if state == stateReady {
			if pos < c.end {
				r.claims.split(i, pos, claimReturned)
			}
			r.claims.setState(i, claimHeld)
			c.end = pos
			return c, pos - total, length, true, false, nil
		}
	}
	// Nothing but discarded records: release them and look again.
	r.claims.setState(i, claimReleased)
	r.advanceLocked()
	return r.claimLocked(single)
}

// releaseLocked ends claim c: the records before upTo were read, the rest
// go back to be claimed again.
func (r *Reader) releaseLocked(c claim, upTo uint64) {
	i := r.claims.find(c.start)
	if i < 0 {
		return
	}
	switch {
	case upTo <= c.start:
		r.claims.setState(i, claimReturned)
	case upTo < c.end:
		r.claims.split(i, upTo, claimReturned)
		r.claims.setState(i, claimReleased)
	default:
		r.claims.setState(i, claimReleased)
	}
	r.advanceLocked()
	if r.waiters > 0 && (r.claims.returned > 0 || r.claims.empty()) {
		// Records committed while this claim was held woke nobody: the
		// kernel wakes readers only when its consumer position has caught
		// up with the record.
		r.wakeLocked()
	}
}

// advanceLocked moves the consumer position over released claims and
// publishes it once enough has piled up.
func (r *Reader) advanceLocked() {
	end, ok := r.claims.popReleased()
	if !ok {
		return
	}
	r.consumerPos = end
	if r.consumerPos-r.publishedPos >= r.batchBytes {
		r.publishLocked()
	}
}

// waitLocked waits for something to read, with mu held on entry and exit.
// It returns the error that ends the read: ErrClosed, ErrFlushed,
// os.ErrDeadlineExceeded; nil means look again.
func (r *Reader) waitLocked(op *readOp, busy bool) error {
	if r.closed {
		return ErrClosed
	}
	if r.err != nil {
		return r.err
	}
	if r.flushPending > 0 {
		r.flushPending--
		return ErrFlushed
	}
	// The kernel must see our position before we sleep: it wakes a reader
	// only for a record at the position it knows.
	r.publishLocked()
	timeout := time.Duration(-1)
	if !r.deadline.IsZero() {
		if timeout = time.Until(r.deadline); timeout <= 0 {
			return os.ErrDeadlineExceeded
		}
	}

	if busy {
		// A producer is between reserve and submit. It will not
		// necessarily wake us (BPF_RB_NO_WAKEUP), so poll: yield a few
		// times, then sleep, doubling up to a millisecond.
		op.busyWaits++
		r.waiters++
		r.mu.Unlock()
		if op.busyWaits <= 8 {
			runtime.Gosched()
		} else {
			d := time.Microsecond << min(op.busyWaits-8, 10)
			if timeout >= 0 {
				d = min(d, timeout)
			}
			time.Sleep(d)
		}
		r.mu.Lock()
		r.waiters--
		return r.afterWaitLocked(nil)
	}
	op.busyWaits = 0

	// Records committed between the claim and the publish above woke
	// nobody: look once more before sleeping.
	producer, err := r.ring.loadProducer(r.consumerPos)
	if err != nil {
		r.err = err
		return err
	}
	if producer != r.claimPos || r.claims.returned > 0 {
		return nil
	}

	r.waiters++
	r.mu.Unlock()
	err = r.poller.Wait(timeout)
	r.mu.Lock()
	r.waiters--
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = nil // the next pass returns records first, then the deadline
	}
	return r.afterWaitLocked(err)
}

func (r *Reader) afterWaitLocked(err error) error {
	if r.waiters == 0 && r.wakePending && r.poller != nil && !r.closed {
		r.poller.Drain()
		r.wakePending = false
	}
	if r.closed {
		if relErr := r.releaseResourcesLocked(); relErr != nil {
			return errors.Join(ErrClosed, relErr)
		}
		return ErrClosed
	}
	return err
}

// isView reports whether b points into the ring's mapping.
func (r *Reader) isView(b []byte) bool {
	if cap(b) == 0 || r.released {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := uintptr(r.ring.data)
	return p >= start && p < start+uintptr(2*r.ring.size)
}
