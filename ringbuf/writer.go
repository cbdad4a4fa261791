package ringbuf

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// Kernel ABI of BPF_MAP_TYPE_USER_RINGBUF (Linux 6.1+, kernel/bpf/ringbuf.c
// as of 6.18; the layout and header bits are ring.go's):
//   - user space maps the producer page and the data area read-write, the
//     consumer page read-only (ringbuf_map_mmap_user);
//   - __bpf_user_ringbuf_peek load-acquires producer_pos (-EINVAL unless
//     8-byte aligned), consumer_pos, then the header there, and checks that
//     the record fits below producer_pos and in a dynptr; a bad record
//     ends every drain, for good; a busy one ends the drain, no error; a
//     discarded one is skipped; pg_off is never read;
//   - consumer_pos is store-released past each record; after a drain that
//     moved it (without BPF_RB_NO_WAKEUP) the kernel wakes the pollers,
//     and ringbuf_map_poll_user reports EPOLLOUT unless the ring is full.
//
// A producer, as libbpf's user_ring_buffer__reserve, writes the header
// {len | BUSY, 0}, store-releases producer_pos past the record, and
// finishes it by storing the header without the busy bit.

var (
	// ErrRecordTooLarge is returned by Reserve and Write for a record the
	// ring, or a dynptr (16 MiB - 1), can never hold.
	ErrRecordTooLarge = errors.New("record larger than the ring can hold")
	// ErrNotReserved is returned by Submit and Discard, changing nothing, for a
	// Reservation finished already, the zero one, or another Writer's.
	ErrNotReserved = errors.New("reservation not outstanding in this writer")
)

// maxDynptrSize is DYNPTR_MAX_SIZE (include/linux/bpf.h).
const maxDynptrSize = 1<<24 - 1

// Writer writes records to a BPF_MAP_TYPE_USER_RINGBUF map, which a BPF
// program drains with bpf_user_ringbuf_drain. Every method may be called
// from any goroutine, and reservations submitted in any order: the kernel
// takes records in the order reserved, up to the first not yet submitted.
// One Writer per map: the kernel does not arbitrate between producers in
// user space.
type Writer struct {
	mu       sync.Mutex // guards producer, and the ring while reserving
	rg       *ring      // we move producerPos, the kernel consumerPos
	producer uint64     // the position of the next reservation
	maxLen   int        // the largest record Reserve accepts
	wait     *epoll.Waiter
	closed   atomic.Bool // read without mu by Submit and Discard
	res      *resources  // its mapping outlives Close (retired) until Go collects the Writer
	cleanup  runtime.Cleanup
}

// Reservation is space for one record, outstanding until [Writer.Submit]
// or [Writer.Discard] accepts it, once.
type Reservation struct {
	// RawSample is the record's payload in the ring, to fill in place until
	// Submit or Discard; its capacity is its length. Do not reslice its front:
	// Submit and Discard find the record by where it starts.
	RawSample []byte
	pos       uint64 // no more fields: 32 bytes stay in registers (BenchmarkWrite)
}

// NewWriter creates a Writer for an ebpf.UserRingbuf map, continuing from
// its producer position; a closed map gives an error wrapping [syscall.EBADF].
func NewWriter(m *ebpf.Map) (*Writer, error) {
	if err := checkMap(m); err != nil {
		return nil, fmt.Errorf("ringbuf: writer: %w", err)
	}
	if m.Type() != ebpf.UserRingbuf {
		return nil, fmt.Errorf("ringbuf: writer: map type %s is not %s", m.Type(), ebpf.UserRingbuf)
	}
	size, err := ringSize(m)
	if err != nil {
		return nil, fmt.Errorf("ringbuf: writer: %w", err)
	}
	mp, rg, err := mapRing(m.FD(), size, true)
	if err != nil {
		return nil, fmt.Errorf("ringbuf: writer: %w", err)
	}
	res := &resources{mappings: []*mapping{mp}}
	res.poller, err = epoll.New()
	if err == nil {
		err = res.poller.AddEdgeTriggeredWritable(m.FD())
	}
	var w *Writer
	if err == nil {
		w, err = newWriter(rg, res)
	}
	if err != nil {
		return nil, fmt.Errorf("ringbuf: writer: %w", errors.Join(err, res.free()))
	}
	return w, nil
}

// newWriter is apart for a test's fake ring.
func newWriter(rg *ring, res *resources) (*Writer, error) {
	consumer := rg.loadConsumer()
	producer := rg.producerPos.load(consumer)
	if producer-consumer > rg.size || producer%recordAlign != 0 || consumer%recordAlign != 0 {
		return nil, fmt.Errorf("%w: producer position %d, consumer position %d, ring of %d bytes",
			ErrCorrupt, producer, consumer, rg.size)
	}
	w := &Writer{
		rg:       rg,
		producer: producer,
		maxLen:   int(min(rg.size-headerSize, maxDynptrSize)),
		res:      res,
	}
	w.wait = epoll.NewWaiter(&w.mu, res.poller, ErrFlushed)
	w.cleanup = runtime.AddCleanup(w, func(res *resources) { res.free() }, res)
	return w, nil
}

// BufferSize returns the size of the ring's data area in bytes.
func (w *Writer) BufferSize() int { return int(w.rg.size) }

// AvailableBytes returns how many bytes of the ring are free, 0 once closed;
// a record of n bytes takes n+8 rounded up to a multiple of 8.
func (w *Writer) AvailableBytes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wait.Closed() {
		return 0
	}
	return int(w.freeLocked())
}

func (w *Writer) freeLocked() uint64 {
	return w.rg.size - (w.producer - w.rg.consumerPos.load(w.producer))
}

// Reserve reserves n bytes for a record, to fill in place and pass to
// [Writer.Submit] or [Writer.Discard]; until then the kernel takes no record
// reserved after it. With the ring too full it waits for a drain (one with
// BPF_RB_NO_WAKEUP wakes nobody), or [ErrClosed], [ErrFlushed] or
// os.ErrDeadlineExceeded; too large a record fails with [ErrRecordTooLarge].
func (w *Writer) Reserve(n int) (Reservation, error) {
	if uint(n) > uint(w.maxLen) {
		return Reservation{}, w.tooLarge(n)
	}
	total := recordTotal(n)
	w.mu.Lock()
	if !w.fitsLocked(total) {
		if err := w.waitForSpaceLocked(total); err != nil {
			return Reservation{}, err
		}
	}
	r := w.reserveAtLocked(w.producer, n)
	w.advanceProducerLocked(w.producer + total)
	w.mu.Unlock()
	return r, nil
}

// ReserveBatch reserves into rs up to len(rs) records of n bytes each, as
// many as fit and at least one, waiting as [Writer.Reserve] does, and returns
// how many; each is finished on its own. With len(rs) == 0 it returns 0.
func (w *Writer) ReserveBatch(rs []Reservation, n int) (int, error) {
	if uint(n) > uint(w.maxLen) {
		return 0, w.tooLarge(n)
	}
	if len(rs) == 0 {
		return 0, nil
	}
	total := recordTotal(n)
	w.mu.Lock()
	if !w.fitsLocked(total) {
		if err := w.waitForSpaceLocked(total); err != nil {
			return 0, err
		}
	}
	rs = rs[:min(uint64(len(rs)), w.freeLocked()/total)]
	pos := w.producer
	for i := range rs {
		rs[i] = w.reserveAtLocked(pos, n)
		pos += total
	}
	w.advanceProducerLocked(pos)
	w.mu.Unlock()
	return len(rs), nil
}

func recordTotal(n int) uint64 {
	return (uint64(n) + headerSize + recordAlign - 1) &^ (recordAlign - 1)
}

func (w *Writer) fitsLocked(total uint64) bool {
	return !w.wait.Closed() && w.freeLocked() >= total
}

func (w *Writer) reserveAtLocked(pos uint64, n int) Reservation {
	*w.headerWordAt(pos) = headerWord(uint32(n) | busyBit)
	return Reservation{RawSample: w.rg.sample(pos, uint32(n)), pos: pos}
}

func (w *Writer) advanceProducerLocked(pos uint64) {
	w.producer = pos
	w.rg.producerPos.store(pos)
}

func (w *Writer) tooLarge(n int) error {
	return fmt.Errorf("%w: %d bytes, at most %d in a ring of %d", ErrRecordTooLarge, n, w.maxLen, w.rg.size)
}

// waitForSpaceLocked returns once total bytes are free, or unlocks w.mu and
// returns the error that ends the wait. Only a reservation that waits begins
// a wait: a Flush with nobody waiting ends the next wait, not the next Reserve.
func (w *Writer) waitForSpaceLocked(total uint64) (err error) {
	var ticket epoll.Ticket
	waiting := false
	defer func() {
		if waiting {
			w.wait.End(&ticket)
		}
		if err != nil {
			w.mu.Unlock()
		}
	}()
	for {
		if w.wait.Closed() {
			return ErrClosed // before a look at the ring, which Close unmapped
		}
		if w.freeLocked() >= total {
			return nil
		}
		if !waiting {
			if err := w.wait.Begin(&ticket); err != nil {
				return err
			}
			waiting = true
		}
		timeout, err := w.wait.Check(&ticket)
		if err != nil {
			return err
		}
		w.wait.Sleep(timeout)
	}
}

// Submit makes a reserved record visible to the kernel; it returns
// [ErrNotReserved] if r is not outstanding, [ErrClosed] if Close discarded it.
func (w *Writer) Submit(r Reservation) error { return w.finish(r, 0) }

// Discard drops a reserved record, which the kernel skips; it fails as
// Submit does.
func (w *Writer) Discard(r Reservation) error { return w.finish(r, discardBit) }

// finish clears r's busy bit, adding flag, if r is this Writer's, busy, and
// not consumed past: loaded after the header, so that the header read was r's.
// The kernel never consumes a busy record: a stale Reservation shows in the
// positions.
func (w *Writer) finish(r Reservation, flag uint32) error {
	if w.owns(r) {
		hdr := w.headerWordAt(r.pos)
		word := atomic.LoadUint64(hdr)
		length := headerLength(word)
		if length&busyBit != 0 && int64(r.pos-w.rg.consumerPos.load(r.pos)) >= 0 &&
			atomic.CompareAndSwapUint64(hdr, word, headerWord(length&^busyBit|flag)) {
			return nil
		}
	}
	return w.notFinished(r)
}

func (w *Writer) owns(r Reservation) bool {
	return unsafe.SliceData(r.RawSample) == (*byte)(unsafe.Add(w.rg.data, r.pos&w.rg.mask+headerSize))
}

func (w *Writer) notFinished(r Reservation) error {
	switch {
	case r.RawSample == nil:
		return fmt.Errorf("ringbuf: %w: the zero Reservation", ErrNotReserved)
	case w.closed.Load(): // Close discarded r
		return ErrClosed
	case !w.owns(r):
		return fmt.Errorf("ringbuf: %w: reserved from another Writer, or RawSample resliced", ErrNotReserved)
	}
	return fmt.Errorf("ringbuf: %w: record at position %d was submitted or discarded already",
		ErrNotReserved, r.pos)
}

// Write writes p as one record, waiting as [Writer.Reserve] does, and
// returns len(p) once it is submitted.
func (w *Writer) Write(p []byte) (int, error) {
	r, err := w.Reserve(len(p))
	if err != nil {
		return 0, err
	}
	copy(r.RawSample, p)
	if err := w.Submit(r); err != nil {
		return 0, err
	}
	return len(p), nil
}

// SetDeadline sets when blocked reservations, also those waiting already,
// give up with os.ErrDeadlineExceeded; the zero time removes it.
func (w *Writer) SetDeadline(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wait.SetDeadline(t)
}

// Flush makes the waiting reservations, or else the next to wait, return
// [ErrFlushed].
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wait.Flush()
}

// Close stops the Writer: blocked and later reservations return [ErrClosed],
// as do Submit and Discard of outstanding ones, which Close discards so the
// kernel does not wait for them; submitted records stay. It returns once
// every blocked Reserve has; a second call returns nil. The map's addresses
// stay private memory until Go collects the Writer: a late write cannot fault.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wait.Closed() {
		return nil
	}
	w.closed.Store(true) // first: a Submit the walk does not see finds it
	w.discardOutstandingLocked()
	w.wait.Close() // returns once nobody waits: the poller is unused
	return errors.Join(w.res.mappings[0].retire(), w.res.closePoller())
}

// discardOutstandingLocked discards the busy records from the kernel's
// consumer position to ours: the kernel neither passes one nor writes headers.
func (w *Writer) discardOutstandingLocked() {
	for pos := w.rg.consumerPos.load(w.producer); int64(w.producer-pos) > 0; {
		hdr := w.headerWordAt(pos)
		word := atomic.LoadUint64(hdr)
		h := header(headerLength(word))
		if h.total() > w.producer-pos {
			return // not a header we wrote: leave the rest alone
		}
		if h.busy() && !atomic.CompareAndSwapUint64(hdr, word, headerWord(uint32(h.length())|discardBit)) {
			continue // submitted meanwhile: look again
		}
		pos += h.total()
	}
}

func (w *Writer) headerWordAt(pos uint64) *uint64 {
	return (*uint64)(unsafe.Add(w.rg.data, pos&w.rg.mask))
}

// headerWord is a header {len; pg_off = 0} as one word: two narrow stores
// read by one wide load stall store forwarding (BenchmarkWrite).
func headerWord(length uint32) uint64 {
	if littleEndian {
		return uint64(length)
	}
	return uint64(length) << 32
}

func headerLength(word uint64) uint32 {
	if littleEndian {
		return uint32(word)
	}
	return uint32(word >> 32)
}
