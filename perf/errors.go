package perf

import (
	"errors"
	"fmt"
	"os"

	upstreamringbuf "github.com/cilium/ebpf/ringbuf"
)

var (
	// ErrClosed is returned by reads and loops of a closed Reader:
	// os.ErrClosed, as upstream's.
	ErrClosed = os.ErrClosed
	// ErrFlushed ends a read or loop that Flush interrupted, once the
	// buffers are empty: cilium/ebpf's perf.ErrFlushed.
	ErrFlushed = upstreamringbuf.ErrFlushed
	// ErrMustBePaused is returned by reads of an overwritable Reader not paused.
	ErrMustBePaused = errors.New("perf: an overwritable buffer must be paused before it is read")
)

type unknownEventError struct{ eventType uint32 }

func (e *unknownEventError) Error() string { return fmt.Sprintf("unknown event type: %d", e.eventType) }

// IsUnknownEvent reports whether err says a record of a type other than a
// sample or lost samples was read and consumed; reading may go on.
func IsUnknownEvent(err error) bool {
	var e *unknownEventError
	return errors.As(err, &e)
}
