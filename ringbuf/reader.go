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

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/sentinel"
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
	// errors.Is also matches it with io.ErrUnexpectedEOF, which
	// cilium/ebpf returns for a corrupt ring.
	ErrCorrupt error = sentinel.New("ring buffer corrupt", io.ErrUnexpectedEOF)
	// ErrNotPeeked is returned by Consume when no record is peeked.
	ErrNotPeeked = errors.New("no record peeked")
	// ErrConcurrentPeek is returned by PeekInto while another PeekInto is
	// in progress or a peeked record is not yet consumed: Peek and Consume
	// serve one goroutine at a time. Nothing is read or consumed.
	ErrConcurrentPeek = errors.New("concurrent use of Peek: a record is peeked or being peeked")
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
// serve one goroutine at a time: a second one gets ErrConcurrentPeek.
// Records may be ranged over by several goroutines at once. SetDeadline,
// Flush, Close, BufferSize and AvailableBytes may be called from any
// goroutine at any time. One Reader per map at a time: a Reader opened
// after another was closed starts where the kernel's consumer position
// says.
//
// On Windows it reads WindowsRingBuf maps with cilium/ebpf's own reader:
// Read, ReadInto, SetDeadline, Flush, Close, BufferSize and AvailableBytes
// work as there; Peek, PeekInto, Consume, Records and Batches return an
// error wrapping ebpf.ErrNotSupported.
type Reader struct {
	// By pointer, so that Reader stays comparable, as cilium/ebpf's is.
	*engine
	peeking  bool  // a PeekInto is in progress, or its view is held
	viewHeld bool  // PeekInto handed out a view not yet consumed
	peeked   claim // the held view's claim

	copyOnly *upstream.Reader // a WindowsRingBuf map's reader (upstream.go); nil for a mapped ring
}

// NewReader creates a Reader for a ring buffer map. It starts at the
// consumer position the map holds, so a pinned or reused ring is read from
// where its last reader stopped.
func NewReader(m *ebpf.Map) (*Reader, error) {
	if m != nil {
		if path, err := choosePath(m.Type(), runtime.GOOS); err == nil && path == pathUpstream {
			return newUpstreamReader(m)
		}
	}
	mp, rg, err := mapRingMap(m)
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
		mp.unmap()
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	res := &resources{poller: poller, mappings: []*mapping{mp}}
	r, err := newReader(rg, res)
	if err != nil {
		return nil, errors.Join(err, res.free())
	}
	// On the engine, not the Reader: a loop holds the engine through the
	// method value Records returns, after the caller dropped the Reader.
	r.core.Cleanup = runtime.AddCleanup(r.engine, func(res *resources) { res.free() }, r.res)
	return r, nil
}

// mapRingMap checks that m is a ring buffer this platform maps and maps it.
func mapRingMap(m *ebpf.Map) (*mapping, *ring, error) {
	if m == nil {
		return nil, nil, errors.New("nil map")
	}
	if err := requireMapped(m.Type(), runtime.GOOS); err != nil {
		return nil, nil, err
	}
	size, err := ringSize(m)
	if err != nil {
		return nil, nil, err
	}
	return mapRing(m.FD(), size, false)
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

// newReader starts a Reader on a ring that is already mapped.
func newReader(rg *ring, res *resources) (*Reader, error) {
	r := &Reader{engine: &engine{}}
	if err := r.init([]*ring{rg}, nil, res); err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	return r, nil
}

// BufferSize returns the size of the ring's data area in bytes.
func (r *Reader) BufferSize() int {
	if r.copyOnly != nil {
		return r.copyOnly.BufferSize()
	}
	return int(r.consumers[0].ring.size)
}

// AvailableBytes returns how many bytes of the ring this reader has not
// consumed yet. It is 0 right after the last record was read, and 0 once
// the Reader is closed.
func (r *Reader) AvailableBytes() int {
	if r.copyOnly != nil {
		return r.copyOnly.AvailableBytes()
	}
	r.core.Mu.Lock()
	defer r.core.Mu.Unlock()
	if r.core.Released() || r.core.Wait.Closed() {
		return 0
	}
	c := &r.consumers[0]
	consumed := c.claims.ConsumerPos()
	producer := c.ring.producerPos.load(consumed)
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
	if r.copyOnly != nil {
		r.copyOnly.SetDeadline(t)
		return
	}
	r.core.SetDeadline(t)
}

// Flush makes reads and loops in progress stop waiting: they return the
// records in the ring, then ErrFlushed. Every read and loop in progress
// when Flush is called ends so, however soon others read again; with none
// in progress, the next one to find the ring empty does. Use it to drain records submitted with BPF_RB_NO_WAKEUP,
// which wake no reader.
func (r *Reader) Flush() error {
	if r.copyOnly != nil {
		return r.copyOnly.Flush()
	}
	return r.core.Flush()
}

// Close stops the Reader: every blocked read and loop returns ErrClosed.
// It may be called from any goroutine and more than once. What was
// consumed is published first; the kernel's consumer position never moves
// back. A running loop yields the rest of the batch it holds, then
// ErrClosed; a view held from Peek stays valid until Consume, which still
// consumes it. The ring is unmapped once the last of them is done.
func (r *Reader) Close() error {
	if r.copyOnly != nil {
		return r.copyOnly.Close()
	}
	return r.core.Close(nil)
}
