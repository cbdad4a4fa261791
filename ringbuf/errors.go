package ringbuf

import (
	"errors"
	"fmt"
	"os"

	upstream "github.com/cilium/ebpf/ringbuf"
)

var (
	// ErrClosed is returned by reads and iterations on a closed Reader:
	// cilium/ebpf's ringbuf.ErrClosed ([os.ErrClosed]).
	ErrClosed = upstream.ErrClosed
	// ErrFlushed ends a read or iteration that [Reader.Flush] interrupted,
	// once the ring is empty: cilium/ebpf's ringbuf.ErrFlushed.
	ErrFlushed = upstream.ErrFlushed
	// ErrNotPeeked is returned by [Reader.Consume] when no record is peeked.
	ErrNotPeeked = errors.New("no record peeked")
	// ErrConcurrentPeek is returned by [Reader.PeekInto] while another
	// PeekInto runs or a peeked record is not consumed; nothing is read.
	ErrConcurrentPeek = errors.New("concurrent use of Peek: a record is peeked or being peeked")
)

// errNilRecord is what a read into a nil *Record returns, matching
// [os.ErrInvalid].
func errNilRecord(op string) error {
	return fmt.Errorf("ringbuf: %s: nil *Record: %w", op, os.ErrInvalid)
}
