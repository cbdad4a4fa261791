package ringbuf

import (
	"fmt"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"
)

// errCopyOnly is what the zero-copy API returns on a Reader of a
// WindowsRingBuf map, which cilium/ebpf's reader reads (pathUpstream):
// its ring is mapped by the eBPF for Windows runtime, out of our reach.
var errCopyOnly = fmt.Errorf("zero-copy reads of a %s map (Peek, PeekInto, Consume, Records, Batches, MultiReader): %w",
	ebpf.WindowsRingBuf, ebpf.ErrNotSupported)

// newUpstreamReader returns a Reader that reads m with cilium/ebpf's
// ringbuf.Reader: Read, ReadInto, SetDeadline, Flush, Close, BufferSize and
// AvailableBytes behave as upstream's; the zero-copy API returns
// errCopyOnly. Its errors are upstream's, whose sentinels are ours.
func newUpstreamReader(m *ebpf.Map) (*Reader, error) {
	rd, err := upstream.NewReader(m)
	if err != nil {
		return nil, err // upstream's error says "ringbuf:" already
	}
	return &Reader{copyOnly: rd}, nil
}

// readIntoUpstream is ReadInto on pathUpstream.
func (r *Reader) readIntoUpstream(rec *Record) error {
	up := upstream.Record{RawSample: rec.RawSample}
	err := r.copyOnly.ReadInto(&up)
	rec.RawSample, rec.Remaining, rec.Ring = up.RawSample, up.Remaining, 0
	return err
}

// copyOnlySeq is Records and Batches on pathUpstream: one pair, the error.
func copyOnlySeq[T any](yield func(T, error) bool) {
	var zero T
	yield(zero, errCopyOnly)
}
