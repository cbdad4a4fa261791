package perf

import (
	"fmt"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// consumer is one CPU's claims and what the kernel was told of them. An
// overwritable buffer is read in windows (loadWindow) whose claim
// positions keep growing; bias maps them onto the buffer's.
type consumer struct {
	buf        *buffer
	cpu        int
	claims     readers.Claims
	head       uint64 // end of the records produced, as a claim position
	published  uint64 // data_tail the kernel has from us
	batchBytes uint64
	err        error // sticky

	overwrite bool
	bias      uint64 // claim position minus buffer position
	lastHead  uint64 // data_head when the last window was taken
}

func newConsumer(buf *buffer, cpu int, overwrite bool) (consumer, error) {
	c := consumer{buf: buf, cpu: cpu, overwrite: overwrite, batchBytes: readers.BatchBytes(buf.size)}
	if overwrite {
		c.lastHead = buf.loadHead(0)
		return c, nil
	}
	tail := buf.loadTail()
	if err := buf.checkHead(buf.loadHead(tail), tail); err != nil {
		return c, err
	}
	c.claims = readers.NewClaims(tail)
	c.head, c.published = tail, tail
	return c, nil
}

func (c *consumer) publish() {
	if pos := c.claims.ConsumerPos(); pos != c.published && !c.overwrite {
		c.buf.storeTail(pos)
		c.published = pos
	}
}

// produced reports whether records lie past the claim position, loading
// the head once the last is used up. An overwritable buffer's records are
// its window's: only a claim, paused, takes the next (loadWindow).
func (c *consumer) produced() bool {
	if c.claims.Pos() == c.head && c.err == nil && !c.overwrite {
		consumed := c.claims.ConsumerPos()
		head := c.buf.loadHead(consumed)
		if err := c.buf.checkHead(head, consumed); err != nil {
			c.err = c.cpuErr(err)
			return false
		}
		c.head = head
	}
	return c.claims.Pos() != c.head
}

// ready reports whether a claim would take records, without taking a
// window: a paused overwritable buffer's window is not used up, or the
// kernel wrote since it was taken.
func (c *consumer) ready() bool {
	if c.overwrite {
		return c.claims.HasReturned() || c.claims.Pos() != c.head || c.buf.loadHead(c.lastHead) != c.lastHead
	}
	return c.claims.HasReturned() || c.produced()
}

// loadWindow takes what an overwritable buffer received since the last
// window, at most its size, once the last is used up and no claim is out:
// one bias serves all. Only a claim of a paused Reader calls it.
func (c *consumer) loadWindow() {
	if !c.claims.Empty() || c.claims.Pos() != c.head {
		return
	}
	head := c.buf.loadHead(c.lastHead)
	if head == c.lastHead {
		return
	}
	if head%recordAlign != 0 {
		c.err = c.cpuErr(fmt.Errorf("%w: data_head %d is not 8-byte aligned", ErrCorrupt, head))
		return
	}
	written := min(c.lastHead-head, c.buf.size)
	c.bias = c.head - head
	c.lastHead = head
	c.head += written
}

// dropWindow drops what is left of the window when the kernel may write
// over it again (Resume): nothing is held, and the next window starts at
// the kernel's head.
func (c *consumer) dropWindow() {
	c.claims = readers.NewClaims(c.head)
}

func (c *consumer) cpuErr(err error) error {
	return fmt.Errorf("CPU %d: %w", c.cpu, err)
}

// scan returns the first record boundary batchBytes past pos, or end (at
// a bad size too: the walk reports it).
func (c *consumer) scan(pos, end uint64) uint64 {
	for next := pos; next < end; {
		size := uint64(c.buf.headerAt(next - c.bias).size)
		if size < headerSize || size%recordAlign != 0 || size > end-next {
			return end
		}
		next += size
		if next-pos >= c.batchBytes {
			return next
		}
	}
	return end
}
