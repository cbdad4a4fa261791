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
// once; Peek, PeekInto and Consume serve one at a time (ErrConcurrentPeek).
// SetDeadline, Flush, Close, ReadinessFD, BufferSize, AvailableBytes and
// Positions may be called from any goroutine at any time. One Reader per
// map at a time. On Windows it has the copy API only (see the package
// doc).
type Reader struct {
	*reader // by pointer, so that Reader stays comparable, as upstream's
}

// reader is a Reader's ring, its peek and its copies.
type reader struct {
	rings
	peek   view
	loan   *readers.Loan     // the engine's, through which a view is lent
	copies readers.CopyCache // ReadInto's
}

// NewReader creates a Reader for a ring buffer map. It starts at the
// consumer position the map holds, where its last reader stopped.
func NewReader(m *ebpf.Map) (*Reader, error) {
	r := &reader{}
	if err := r.open([]*ebpf.Map{m}, nil); err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	r.lend()
	return &Reader{r}, nil
}

// lend gives the engine what it needs to lend a Peek view.
func (r *reader) lend() {
	c := &r.consumers[0]
	r.loan = r.engine.Lender(r.releasePeek, func() bool { return r.peek.returned(c) })
}

// releasePeek ends the Peek view, if one is held, under the engine's lock.
func (r *reader) releasePeek() int { return r.peek.release(&r.consumers[0]) }

// BufferSize returns the size of the ring's data area in bytes.
func (r *Reader) BufferSize() int { return int(r.consumers[0].ring.size) }

// AvailableBytes returns how many bytes of the ring this reader has not
// consumed yet: records not read, and those a loop body or Peek view
// holds; 0 once the Reader is closed.
func (r *Reader) AvailableBytes() int {
	available := 0
	r.engine.Inspect(func() { available = r.consumers[0].unconsumed() })
	return available
}

// Positions returns the ring's positions as the kernel holds them, as
// libbpf's ring__ functions do; [ErrClosed] once the Reader is closed.
func (r *Reader) Positions() (RingPositions, error) { return r.positions(0) }

// SetDeadline sets when blocked reads and loops give up with
// os.ErrDeadlineExceeded, after the records in the ring; the zero time
// removes it. It takes effect at once, also for reads already waiting.
func (r *Reader) SetDeadline(t time.Time) { r.engine.SetDeadline(t) }

// Flush makes every read and loop in progress return the records in the
// ring, then [ErrFlushed], however soon others read again; with none in
// progress, the next to find the ring empty does. Use it to drain records
// submitted with BPF_RB_NO_WAKEUP, which wake no reader.
func (r *Reader) Flush() error { return r.engine.Flush() }

// Close stops the Reader: every blocked read returns [ErrClosed], and has
// returned when Close returns, as with cilium/ebpf; a blocked loop has
// ended by then, its body getting ErrClosed. A loop body running the
// caller's code is not waited for, so Close may be called from one. It
// may be called from any goroutine and more than once; a second call
// returns at once. What was consumed is published first. A running loop
// yields the rest of the batch it holds, then ErrClosed; a Peek view
// stays valid until [Reader.Consume], which consumes it. The ring is
// unmapped once both are done.
func (r *Reader) Close() error { return r.engine.Close(nil) }

// ReadinessFD returns a file descriptor that is readable exactly while a
// read with the deadline passed would return at once with a record or an
// error: records wait that no read, loop body or Peek view holds, a
// [Reader.Flush] waits for the next read that finds the ring empty, or
// the Reader is closed. With it one event loop serves the ring beside
// sockets and timers, through epoll, poll or Go's poller ([os.NewFile]),
// as libbpf's ring_buffer__epoll_fd does. Read what it announces through
// the Reader (Read, ReadInto, Records…) with a deadline already passed
// ([Reader.SetDeadline]), until a read returns [os.ErrDeadlineExceeded]
// or [ErrFlushed]. The example shows such a loop.
//
// It is an eventfd the Reader sets after every read, loop step, release,
// Flush and Close. Records committed while nobody reads reach it through
// the kernel's wake-up, so records submitted with BPF_RB_NO_WAKEUP show
// only once something else wakes the Reader or reads (Flush drains
// them). Records committed behind ones a loop body or Peek view holds
// wake nobody: they show within a millisecond, while the Reader polls.
// A record a producer is still writing counts as waiting, as do records
// the producer discarded until a read skips them: then a read it
// announced finds nothing.
//
// The descriptor is made on the first call, with a goroutine that waits
// in Go's poller for the kernel's wake-ups; later calls return the same.
// It belongs to the Reader, which closes it with its other resources:
// when [Reader.Close] returns, or once the last loop body or Peek view
// still using the Reader ends. Do not close it: wrap a duplicate
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
func (r *Reader) ReadinessFD() (int, error) { return r.readinessFD() }
