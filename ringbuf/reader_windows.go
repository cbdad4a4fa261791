package ringbuf

import (
	"fmt"
	"iter"
	"runtime"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"
)

// Reader reads a WindowsRingBuf map through cilium/ebpf's ringbuf.Reader,
// whose copy API and errors are ours; the zero-copy API returns an error
// matching [ebpf.ErrNotSupported].
type Reader struct {
	rd *upstream.Reader
}

// NewReader creates a Reader for a WindowsRingBuf map.
func NewReader(m *ebpf.Map) (*Reader, error) {
	if err := checkMap(m); err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	if _, err := choosePath(m.Type(), runtime.GOOS); err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	rd, err := upstream.NewReader(m)
	if err != nil {
		return nil, err // it says "ringbuf:" already
	}
	return &Reader{rd: rd}, nil
}

// Read returns the next record, copied.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is [Reader.Read] into rec.
func (r *Reader) ReadInto(rec *Record) error { return readIntoUpstream(r.rd, rec) }

// BufferSize returns the size of the ring's data area in bytes.
func (r *Reader) BufferSize() int { return r.rd.BufferSize() }

// AvailableBytes returns how many bytes of the ring were not read yet.
func (r *Reader) AvailableBytes() int { return r.rd.AvailableBytes() }

// SetDeadline is upstream's SetDeadline.
func (r *Reader) SetDeadline(t time.Time) { r.rd.SetDeadline(t) }

// Flush is upstream's Flush.
func (r *Reader) Flush() error { return r.rd.Flush() }

// Close is upstream's Close.
func (r *Reader) Close() error { return r.rd.Close() }

// Peek returns an error matching [ebpf.ErrNotSupported].
func (r *Reader) Peek() (Record, error) { return Record{}, errCopyOnly }

// PeekInto returns an error matching [ebpf.ErrNotSupported].
func (r *Reader) PeekInto(*Record) error { return errCopyOnly }

// Consume returns an error matching [ebpf.ErrNotSupported].
func (r *Reader) Consume() error { return errCopyOnly }

// Records yields one error, matching [ebpf.ErrNotSupported].
func (r *Reader) Records() iter.Seq2[*Record, error] { return copyOnlySeq[*Record] }

// Batches yields one error, matching [ebpf.ErrNotSupported].
func (r *Reader) Batches() iter.Seq2[*Batch, error] { return copyOnlySeq[*Batch] }

// ReadinessFD returns -1 and an error: the ring has no such descriptor.
func (r *Reader) ReadinessFD() (int, error) {
	return -1, fmt.Errorf("ringbuf: readiness descriptor of a %s map: %w", ebpf.WindowsRingBuf, ebpf.ErrNotSupported)
}

// Positions returns an error matching [ebpf.ErrNotSupported].
func (r *Reader) Positions() (RingPositions, error) { return RingPositions{}, errCopyOnly }
