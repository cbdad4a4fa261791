package ringbuf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"

	"github.com/ebpf-zc/ebpf/internal/sentinel"
)

var (
	// ErrClosed is returned by reads and iterations on a closed Reader:
	// cilium/ebpf's ringbuf.ErrClosed (os.ErrClosed).
	ErrClosed = upstream.ErrClosed
	// ErrFlushed ends a read or iteration that Flush interrupted, once the
	// ring is empty: cilium/ebpf's ringbuf.ErrFlushed.
	ErrFlushed = upstream.ErrFlushed
	// ErrCorrupt is returned when the ring's positions or a record header
	// contradict the kernel's layout; the Reader stops at the bad record.
	// It matches io.ErrUnexpectedEOF, cilium/ebpf's error then.
	ErrCorrupt error = sentinel.New("ring buffer corrupt", io.ErrUnexpectedEOF)
	// ErrNotPeeked is returned by Consume when no record is peeked.
	ErrNotPeeked = errors.New("no record peeked")
	// ErrConcurrentPeek is returned by PeekInto while another PeekInto runs
	// or a peeked record is not yet consumed; nothing is read or consumed.
	ErrConcurrentPeek = errors.New("concurrent use of Peek: a record is peeked or being peeked")
)

// Record is a sample read from the ring buffer.
type Record struct {
	// RawSample is the record's payload: a copy from Read and ReadInto, a
	// view of the ring from Peek, PeekInto and Records, valid as they say.
	RawSample []byte
	// Remaining is the minimum number of bytes left in the ring after it.
	Remaining int
	// Ring is the ring of a MultiReader's record: its map's index in
	// NewMultiReader's list, or its key in the map of maps; 0 from a Reader.
	Ring int
}

// Reader reads records from a BPF_MAP_TYPE_RINGBUF map.
//
// Read, ReadInto, Records and Batches may be used by several goroutines at
// once; Peek, PeekInto and Consume serve one at a time (ErrConcurrentPeek).
// SetDeadline, Flush, Close, BufferSize and AvailableBytes may be called
// from any goroutine at any time. One Reader per map at a time. On Windows
// it has the copy API only (see the package doc).
type Reader struct {
	*engine // by pointer, so that Reader stays comparable, as upstream's

	copyOnly *upstream.Reader // a WindowsRingBuf map's reader (upstream.go); nil for a mapped ring
}

// NewReader creates a Reader for a ring buffer map. It starts at the
// consumer position the map holds, where its last reader stopped.
func NewReader(m *ebpf.Map) (*Reader, error) {
	if m != nil {
		if path, err := choosePath(m.Type(), runtime.GOOS); err == nil && path == pathUpstream {
			return newUpstreamReader(m)
		}
	}
	e, err := newEngine([]*ebpf.Map{m}, nil)
	if err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	return &Reader{engine: e}, nil
}

// ringSize returns the size of the data area of m, a ring buffer or a
// user ring buffer (they share the layout), checking that the kernel's
// rule holds: a power-of-two number of pages.
func ringSize(m *ebpf.Map) (uint64, error) {
	size := uint64(m.MaxEntries())
	if size == 0 || size&(size-1) != 0 || size%uint64(os.Getpagesize()) != 0 {
		return 0, fmt.Errorf("size %d is not a power-of-two number of pages", size)
	}
	return size, nil
}

// BufferSize returns the size of the ring's data area in bytes.
func (r *Reader) BufferSize() int {
	if r.copyOnly != nil {
		return r.copyOnly.BufferSize()
	}
	return int(r.consumers[0].ring.size)
}

// AvailableBytes returns how many bytes of the ring this reader has not
// consumed yet; 0 once the Reader is closed.
func (r *Reader) AvailableBytes() int {
	if r.copyOnly != nil {
		return r.copyOnly.AvailableBytes()
	}
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	if r.core.Freed() || r.core.Wait.Closed() {
		return 0
	}
	c := &r.consumers[0]
	consumed := c.claims.ConsumerPos()
	if !r.settlePeekLocked(false) {
		consumed = r.peek.claim.Start // a fast view, unlisted, is held
	}
	return int(max(c.ring.producerPos.load(consumed), consumed) - consumed)
}

// SetDeadline sets when blocked reads and loops give up with
// os.ErrDeadlineExceeded, after the records in the ring; the zero time
// removes it. It takes effect at once, also for reads already waiting.
func (r *Reader) SetDeadline(t time.Time) {
	if r.copyOnly != nil {
		r.copyOnly.SetDeadline(t)
		return
	}
	r.core.SetDeadline(t)
}

// Flush makes every read and loop in progress return the records in the
// ring, then ErrFlushed, however soon others read again; with none in
// progress, the next to find the ring empty does. Use it to drain records
// submitted with BPF_RB_NO_WAKEUP, which wake no reader.
func (r *Reader) Flush() error {
	if r.copyOnly != nil {
		return r.copyOnly.Flush()
	}
	return r.core.Flush()
}

// Close stops the Reader: every blocked read returns ErrClosed, and has
// returned when Close returns, as with cilium/ebpf; a blocked loop has
// ended by then, its body getting ErrClosed. A loop body running the
// caller's code is not waited for, so Close may be called from one. It may be called from any goroutine and more than once; a
// second call returns at once. What was consumed is published first. A running loop yields the rest of the
// batch it holds, then ErrClosed; a Peek view stays valid until Consume,
// which consumes it. The ring is unmapped once both are done.
func (r *Reader) Close() error {
	if r.copyOnly != nil {
		return r.copyOnly.Close()
	}
	// A fast view still held becomes the mutex's, so that its Consume
	// frees the resources.
	return r.core.Close(func() error {
		r.settlePeekLocked(true)
		return nil
	})
}
