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
// as of 6.18; the layout and header bits are those of ring.go):
//   - ringbuf_map_mmap_user refuses a writable mapping of page 0, the
//     consumer position, which only the kernel moves; the producer page and
//     the data area (mapped twice, as for RINGBUF) may be mapped read-write;
//   - __bpf_user_ringbuf_peek load-acquires producer_pos (-EINVAL unless
//     8-byte aligned), then consumer_pos, then the header at the consumer
//     position, and checks that the record fits below producer_pos
//     (-EINVAL), in the data area and in a dynptr, whose size is at most
//     (1<<24)-1 bytes (-E2BIG); such an error ends bpf_user_ringbuf_drain
//     with no record consumed, so a bad record stops the ring for good;
//   - a header with BPF_RINGBUF_BUSY_BIT ends the drain (-ENODATA, counted
//     as no error): records behind a busy one wait until it is submitted;
//     one with BPF_RINGBUF_DISCARD_BIT is skipped, its space released;
//   - the kernel never reads the header's second word (pg_off), which the
//     kernel's own ring uses to find the map: a user producer may put
//     anything there;
//   - __bpf_user_ringbuf_sample_release store-releases consumer_pos past
//     each record once the callback returned;
//   - after a drain that took or skipped at least one record (and was not
//     given BPF_RB_NO_WAKEUP) the kernel wakes the map's pollers through
//     irq_work; ringbuf_map_poll_user reports EPOLLOUT while
//     producer_pos - consumer_pos < size, so a full ring is the only state
//     that is not writable, and a drain is the only wake-up.
//
// As libbpf's user_ring_buffer__reserve does (tools/lib/bpf/ringbuf.c), a
// producer writes the header {len | BUSY, 0} at producer_pos, then
// store-releases producer_pos past the record, which may fill the ring to
// the last byte; to submit it stores the header without the busy bit, to
// discard with the discard bit.

var (
	// ErrRecordTooLarge is returned by Reserve and Write for a record the
	// ring can never hold: header included, larger than the ring, or
	// larger than a BPF dynptr can describe (16 MiB - 1).
	ErrRecordTooLarge = errors.New("record larger than the ring can hold")
	// ErrNotReserved is returned by Submit and Discard for a Reservation
	// that is not outstanding in this Writer: submitted or discarded
	// already, the zero Reservation, or made by another Writer. Nothing
	// in the ring changes.
	ErrNotReserved = errors.New("reservation not outstanding in this writer")
)

// maxDynptrSize is the largest record bpf_user_ringbuf_drain hands to a
// program: the kernel's DYNPTR_MAX_SIZE, (1<<24)-1 (include/linux/bpf.h).
const maxDynptrSize = 1<<24 - 1

// Writer writes records to a BPF_MAP_TYPE_USER_RINGBUF map, from which a
// BPF program takes them with bpf_user_ringbuf_drain.
//
// [Writer.Reserve] hands out space in the ring to be filled in place;
// [Writer.Submit] makes it visible to the kernel, [Writer.Discard]
// drops it. [Writer.Write] copies a record in one
// call. All methods may be called from any goroutine at any time, and
// reservations may be submitted in any order: the kernel takes records in
// the order they were reserved, stopping at the first one not yet
// submitted, so it never sees a record half written. One Writer per map:
// the kernel does not arbitrate between producers in user space.
type Writer struct {
	mu       sync.Mutex // guards producer, and the ring's positions while reserving
	rg       *ring      // the kernel's layout; we move producerPos, the kernel consumerPos
	producer uint64     // the position of the next reservation
	maxLen   int        // the largest record Reserve accepts
	wait     *epoll.Waiter
	closed   atomic.Bool // read without mu by Submit and Discard
	res      *writerResources
	cleanup  runtime.Cleanup
}

// writerResources are what a Writer holds outside Go's heap. The mapping
// outlives Close (see mapping.retire) until Go collects the Writer.
type writerResources struct {
	poller  *epoll.Poller
	mapping *mapping
}

func (res *writerResources) closePoller() error {
	if res.poller == nil {
		return nil
	}
	err := res.poller.Close()
	res.poller = nil
	return err
}

func (res *writerResources) free() error {
	return errors.Join(res.closePoller(), res.mapping.unmap())
}

// Reservation is space for one record, reserved in the ring by
// [Writer.Reserve] and outstanding until Submit or Discard, which either
// Writer method accepts exactly once.
//
// It is 32 bytes, so that the compiler keeps it in registers: a larger
// one was copied through the stack with wide loads of narrow stores,
// which stall store forwarding and cost a 16-byte record a third of its
// time (BenchmarkWrite).
type Reservation struct {
	// RawSample is the record's payload in the ring's memory, as long as
	// Reserve was asked for: fill it in place. It is valid until the
	// reservation is submitted or discarded; its capacity equals its
	// length, so an append copies instead of writing past the record.
	// Submit and Discard find the record by where it starts: a
	// Reservation whose RawSample was resliced from the front is not
	// accepted.
	RawSample []byte
	pos       uint64 // the record's position in the ring
}

// NewWriter creates a Writer for a user ring buffer map
// (ebpf.UserRingbuf). It continues from the producer position the map
// holds, so a pinned ring gets records after those already in it. A
// closed map is refused with an error wrapping [syscall.EBADF].
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
	res := &writerResources{mapping: mp}
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

// newWriter starts a Writer on rg at the producer position it holds; res
// holds rg's mapping and the poller that wakes its waits. A test's fake
// ring, which no kernel maps, comes in here.
func newWriter(rg *ring, res *writerResources) (*Writer, error) {
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
	w.cleanup = runtime.AddCleanup(w, func(res *writerResources) { res.free() }, res)
	return w, nil
}

// BufferSize returns the size of the ring's data area in bytes.
func (w *Writer) BufferSize() int { return int(w.rg.size) }

// AvailableBytes returns how many bytes of the ring are free for new
// records, headers included: a record of n bytes needs n+8 rounded up to
// a multiple of 8. It is 0 once the Writer is closed.
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

// Reserve reserves n bytes in the ring for a record, to be filled through
// the returned [Reservation]'s RawSample and then passed to
// [Writer.Submit] or [Writer.Discard]. Until then the kernel takes no record reserved after it.
//
// With the ring too full, Reserve waits until a drain frees enough space,
// and returns [ErrClosed] after Close, [ErrFlushed] after Flush, or
// os.ErrDeadlineExceeded once the deadline passes. A drain run with
// BPF_RB_NO_WAKEUP wakes nobody: set a deadline, or call Flush. A record
// the ring can never hold fails at once with ErrRecordTooLarge.
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

// ReserveBatch reserves up to len(rs) records of n bytes each, one after
// the other in the ring, and stores them in rs: as many as fit, at least
// one, waiting for space as [Writer.Reserve] does. It returns how many it
// reserved; each is submitted or discarded on its own, in any order.
// With len(rs) == 0 it returns 0 at once.
//
// A batch takes the Writer's lock and shows the kernel its records once,
// where Reserve does both for every record. Goroutines writing at once
// each fill a stretch of the ring of their own this way, instead of
// records interleaved with the other goroutines' (docs/writer.md).
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

// recordTotal is the ring space a record of n bytes takes.
func recordTotal(n int) uint64 {
	return (uint64(n) + headerSize + recordAlign - 1) &^ (recordAlign - 1)
}

// fitsLocked reports whether a record of total bytes may be reserved
// without waiting.
func (w *Writer) fitsLocked(total uint64) bool {
	return !w.wait.Closed() && w.freeLocked() >= total
}

// reserveAtLocked writes the busy header of a record of n bytes at pos,
// which advanceProducerLocked then shows the kernel.
func (w *Writer) reserveAtLocked(pos uint64, n int) Reservation {
	*w.headerWordAt(pos) = headerWord(uint32(n) | busyBit)
	return Reservation{RawSample: w.rg.sample(pos, uint32(n)), pos: pos}
}

// advanceProducerLocked moves the producer position to pos, past the busy
// headers written before it (a store-release: Go's atomic stores are
// sequentially consistent).
func (w *Writer) advanceProducerLocked(pos uint64) {
	w.producer = pos
	w.rg.producerPos.store(pos)
}

func (w *Writer) tooLarge(n int) error {
	return fmt.Errorf("%w: %d bytes, at most %d in a ring of %d", ErrRecordTooLarge, n, w.maxLen, w.rg.size)
}

// waitForSpaceLocked returns once total bytes are free, or with the error
// that ends the wait, and then unlocks w.mu. Only a reservation that has
// to wait counts with the waiter, so a Flush with nobody waiting ends the
// next wait, not the next Reserve.
func (w *Writer) waitForSpaceLocked(total uint64) (err error) {
	var ticket epoll.Ticket // which Flush covers this wait
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
			// Before any look at the ring: Close unmapped its consumer page.
			return ErrClosed
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

// Submit makes a reserved record visible to the kernel. It returns
// ErrNotReserved for a Reservation that is not outstanding in this
// Writer, and ErrClosed if Close discarded it first.
func (w *Writer) Submit(r Reservation) error { return w.finish(r, 0) }

// Discard drops a reserved record: the kernel skips it. It returns errors
// as Submit does.
func (w *Writer) Discard(r Reservation) error { return w.finish(r, discardBit) }

// finish clears the busy bit of r's header, adding flag. r is this
// Writer's if its RawSample starts where a record at r.pos would in this
// Writer's mapping; it is outstanding if the kernel has not consumed past
// r.pos and the header there is busy. The kernel never consumes a busy
// record, and space is reserved again only once consumed, so the bytes
// at r.pos are r's header until r is finished, and another record's
// (whatever they look like) once the kernel moved past it: a stale
// Reservation is told by the positions, not by the header's look. The
// consumer position is loaded after the header, so that the header read
// was r's; one compare-and-swap of the whole header then finishes it. Submit
// and Discard inline to a call of it: one call a record, not two.
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

// owns reports whether r's RawSample starts where a record at r.pos
// would in this Writer's mapping.
func (w *Writer) owns(r Reservation) bool {
	return unsafe.SliceData(r.RawSample) == (*byte)(unsafe.Add(w.rg.data, r.pos&w.rg.mask+headerSize))
}

// notFinished says why r could not be finished.
func (w *Writer) notFinished(r Reservation) error {
	switch {
	case r.RawSample == nil:
		return fmt.Errorf("ringbuf: %w: the zero Reservation", ErrNotReserved)
	case w.closed.Load():
		// Close discarded r, and retired the ring.
		return ErrClosed
	case !w.owns(r):
		return fmt.Errorf("ringbuf: %w: reserved from another Writer, or RawSample resliced", ErrNotReserved)
	}
	return fmt.Errorf("ringbuf: %w: record at position %d was submitted or discarded already",
		ErrNotReserved, r.pos)
}

// Write writes p to the ring as one record: Reserve, a copy, Submit. It
// waits for space as Reserve does, and returns len(p) once the record is
// submitted.
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

// SetDeadline sets when blocked reservations give up with
// os.ErrDeadlineExceeded. The zero time removes the deadline. It takes
// effect at once, also for reservations already waiting.
func (w *Writer) SetDeadline(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wait.SetDeadline(t)
}

// Flush makes the reservations waiting for space return ErrFlushed, or,
// with none waiting, the next one that has to wait.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wait.Flush()
}

// Close stops the Writer: blocked and later reservations return
// ErrClosed, and so do Submit and Discard of reservations still
// outstanding, which Close discards so that the kernel does not wait for
// them forever. Records submitted before stay in the ring for the kernel.
// It may be called from any goroutine and more than once; the first call
// returns once every Reserve and ReserveBatch that was blocked has
// returned.
//
// The map is unmapped at once; the addresses of its pages stay reserved,
// as private memory nobody reads, until Go collects the Writer, so a
// slice of a reservation written after Close cannot fault, nor a Submit
// racing with Close.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wait.Closed() {
		return nil
	}
	// Before the walk: a Submit whose compare-and-swap the walk does not
	// see finds closed set (both are sequentially consistent).
	w.closed.Store(true)
	w.discardOutstandingLocked()
	w.wait.Close() // returns once nobody waits: the poller is unused
	return errors.Join(w.res.mapping.retire(true), w.res.closePoller())
}

// discardOutstandingLocked discards every record between the kernel's
// consumer position and ours that is still busy. Nobody reserves
// meanwhile, and the kernel neither moves past a busy record nor writes a
// header, so the walk reads the headers we wrote.
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

// headerWordAt returns the record header at pos as one word.
func (w *Writer) headerWordAt(pos uint64) *uint64 {
	return (*uint64)(unsafe.Add(w.rg.data, pos&w.rg.mask))
}

// headerWord is a record header {len; pg_off = 0}, as the one word the
// compare-and-swap of finish compares. Shifts, not a [2]uint32 read as a
// uint64: two narrow stores read by one wide load stall store forwarding,
// which cost a 16-byte record a fifth of its time (BenchmarkWrite).
func headerWord(length uint32) uint64 {
	if littleEndian {
		return uint64(length)
	}
	return uint64(length) << 32
}

// headerLength undoes headerWord.
func headerLength(word uint64) uint32 {
	if littleEndian {
		return uint32(word)
	}
	return uint32(word >> 32)
}
