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

// readIntoUpstream is ReadInto on pathUpstream, by rd.
func readIntoUpstream(rd *upstream.Reader, rec *Record) error {
	up := upstream.Record{RawSample: rec.RawSample}
	err := rd.ReadInto(&up)
	rec.RawSample, rec.Remaining, rec.Ring = up.RawSample, up.Remaining, 0
	return err
}

// copyOnlySeq is Records and Batches on pathUpstream: one pair, the error.
func copyOnlySeq[T any](yield func(T, error) bool) {
	var zero T
	yield(zero, errCopyOnly)
}
