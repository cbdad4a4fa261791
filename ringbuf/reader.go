package ringbuf

import (
	"fmt"
	"runtime"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"
)

// Reader reads records from a BPF_MAP_TYPE_RINGBUF map.
//
// Read, ReadInto, Records and Batches may be used by several goroutines at
// once; Peek, PeekInto and Consume serve one at a time (ErrConcurrentPeek).
// SetDeadline, Flush, Close, ReadinessFD, BufferSize and AvailableBytes
// may be called from any goroutine at any time. One Reader per map at a
// time. On Windows it has the copy API only (see the package doc).
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

// newUpstreamReader returns a Reader that reads m with cilium/ebpf's
// ringbuf.Reader (pathUpstream): Read, ReadInto, SetDeadline, Flush,
// Close, BufferSize and AvailableBytes behave as upstream's; the
// zero-copy API returns errCopyOnly. Its errors are upstream's, whose
// sentinels are ours.
func newUpstreamReader(m *ebpf.Map) (*Reader, error) {
	rd, err := upstream.NewReader(m)
	if err != nil {
		return nil, err // upstream's error says "ringbuf:" already
	}
	return &Reader{copyOnly: rd}, nil
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
// ring, then [ErrFlushed], however soon others read again; with none in
// progress, the next to find the ring empty does. Use it to drain records
// submitted with BPF_RB_NO_WAKEUP, which wake no reader.
func (r *Reader) Flush() error {
	if r.copyOnly != nil {
		return r.copyOnly.Flush()
	}
	return r.core.Flush()
}

// Close stops the Reader: every blocked read returns [ErrClosed], and has
// returned when Close returns, as with cilium/ebpf; a blocked loop has
// ended by then, its body getting ErrClosed. A loop body running the
// caller's code is not waited for, so Close may be called from one. It
// may be called from any goroutine and more than once; a
// second call returns at once. What was consumed is published first. A running loop yields the rest of the
// batch it holds, then ErrClosed; a Peek view stays valid until [Reader.Consume],
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

// ReadinessFD returns a file descriptor that is readable while a read
// would return at once: records wait in the ring, a [Reader.Flush] is
// pending for the next read that finds the ring empty, or the Reader is
// closed. With it one event loop serves the ring beside sockets and
// timers, through epoll, poll or Go's poller ([os.NewFile]), as libbpf's
// ring_buffer__epoll_fd does. Read what it announces through the Reader
// (Read, ReadInto, Records…) with a deadline already passed
// ([Reader.SetDeadline]), until a read returns [os.ErrDeadlineExceeded]
// or [ErrFlushed]; from then on it is not readable until the kernel
// wakes a reader for a new record. The example shows such a loop.
//
// Records wait while the kernel's producer position is ahead of the
// consumer position the Reader told it: records not read yet, or held by
// a loop body or a Peek view. The kernel wakes a reader only for a record
// committed while it had caught up, and never for one submitted with
// BPF_RB_NO_WAKEUP: Flush drains those. A read or loop that waits in the
// Reader (no deadline, or one still ahead) may take the wake-up the
// descriptor would show; then the descriptor stays readable until a read
// finds the ring empty, so that no record goes unannounced, and a read
// it announced may find nothing.
//
// The descriptor is made on the first call, which costs two descriptors
// (an epoll instance and an eventfd); later calls return the same. It
// belongs to the Reader, which closes it with its other resources: when
// [Reader.Close] returns, or once the last loop body or Peek view still
// using the Reader ends. Do not close it: wrap a duplicate
// ([golang.org/x/sys/unix.Dup]) to make an *os.File, which closes what
// it holds. Close makes it readable first, but, as for any descriptor,
// closing it does not wake a poller reliably, and afterwards poll
// reports POLLNVAL, epoll_ctl fails with EBADF, and an epoll set drops
// it: remove it from your poller, or close your *os.File (which ends a
// wait on it), before Close.
//
// It returns -1 and [ErrClosed] on a closed Reader, and -1 and an error
// matching [ebpf.ErrNotSupported] on Windows, whose ring has no such
// descriptor.
func (r *Reader) ReadinessFD() (int, error) {
	if r.copyOnly != nil {
		return -1, fmt.Errorf("ringbuf: readiness descriptor of a %s map: %w", ebpf.WindowsRingBuf, ebpf.ErrNotSupported)
	}
	return r.readinessFD()
}

// readinessFD is ReadinessFD on a mapped ring.
func (e *engine) readinessFD() (int, error) {
	fd, err := e.core.ReadinessFD(false)
	if err != nil {
		return -1, fmt.Errorf("ringbuf: readiness descriptor: %w", err)
	}
	return fd, nil
}
