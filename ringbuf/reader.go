//go:build !windows

package ringbuf

import (
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// Reader reads records from a BPF_MAP_TYPE_RINGBUF map.
//
// Read, ReadInto, Records and Batches may be used by several goroutines at
// once; Peek, PeekInto and Consume by one at a time ([ErrConcurrentPeek]);
// the other methods by any goroutine at any time. One Reader per map at a
// time. On Windows it has the copy API only (see the package doc).
type Reader struct {
	*reader // by pointer, so that Reader stays comparable, as upstream's
}

type reader struct {
	rings
	peek   view
	loan   *readers.Loan     // through which a Peek view is lent
	copies readers.CopyCache // ReadInto's
}

// NewReader creates a Reader for a ring buffer map, starting at the
// consumer position the map holds, where its last reader stopped.
func NewReader(m *ebpf.Map) (*Reader, error) {
	r := &reader{}
	if err := r.open([]*ebpf.Map{m}, nil); err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	r.lend()
	return &Reader{r}, nil
}

func (r *reader) lend() {
	c := &r.consumers[0]
	r.loan = r.engine.Lender(r.releasePeek, func() bool { return r.peek.returned(c) })
}

// releasePeek ends the Peek view, if held, under the engine's lock.
func (r *reader) releasePeek() int { return r.peek.release(&r.consumers[0]) }

// BufferSize returns the size of the ring's data area in bytes.
func (r *Reader) BufferSize() int { return int(r.consumers[0].ring.size) }

// AvailableBytes returns how many bytes of the ring the Reader has not
// consumed: records not read, or held by a loop body or Peek view; 0 once
// closed.
func (r *Reader) AvailableBytes() int { return r.available(0) }

// Positions returns the ring's positions as the kernel holds them, as
// libbpf's ring__ functions do; [ErrClosed] once closed.
func (r *Reader) Positions() (RingPositions, error) { return r.positions(0) }

// SetDeadline sets when blocked reads and loops give up with
// os.ErrDeadlineExceeded, after the records in the ring, also those
// waiting already; the zero time removes it.
func (r *Reader) SetDeadline(t time.Time) { r.engine.SetDeadline(t) }

// Flush makes every read and loop in progress return the records in the
// ring, then [ErrFlushed]; with none in progress, the next to find the
// ring empty does. Use it to drain records submitted with
// BPF_RB_NO_WAKEUP, which wake no reader.
func (r *Reader) Flush() error { return r.engine.Flush() }

// Close stops the Reader, publishing what was consumed: every blocked read
// or loop has returned or ended with [ErrClosed] when it returns, as with
// cilium/ebpf. A loop body is not waited for, so it may call Close; a
// running loop yields the rest of its batch, then ErrClosed, and a Peek
// view stays valid until [Reader.Consume]. The ring is unmapped once both
// are done. A second call returns at once.
func (r *Reader) Close() error { return r.engine.Close(nil) }

// ReadinessFD returns a file descriptor readable exactly while a read with
// the deadline passed would return at once: records wait that no read,
// loop body or Peek view holds, a [Reader.Flush] waits for the next read
// that finds the ring empty, or the Reader is closed. An event loop serves
// the ring beside sockets and timers with it (epoll, poll, [os.NewFile]),
// as with libbpf's ring_buffer__epoll_fd: read what it announces with a
// deadline already passed ([Reader.SetDeadline]) until a read returns
// [os.ErrDeadlineExceeded] or [ErrFlushed] (see the example).
//
// It is an eventfd set after every operation and by the kernel's wake-up:
// records submitted with BPF_RB_NO_WAKEUP show once something else wakes
// or reads the Reader, those behind a held record within a millisecond. A
// record being written, or discarded and not yet skipped, counts as
// waiting: a read may then find nothing.
//
// It is made on the first call, with a goroutine waiting in epoll_wait,
// and returned again on later calls. The Reader closes it with its other
// resources, once closed and the last loop body or Peek view has ended: do
// not close it (wrap a [golang.org/x/sys/unix.Dup] of it in an *os.File),
// and remove it from your poller before Close, since a closed descriptor
// does not wake a poller reliably. It returns -1 and
// [ErrClosed] once closed, -1 and an error matching [ebpf.ErrNotSupported]
// on Windows.
func (r *Reader) ReadinessFD() (int, error) { return r.readinessFD() }
