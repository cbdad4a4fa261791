package perf

import (
	"fmt"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// consumer is one CPU's consumer side: the claims of its records
// (readers.Claims says what a claim is) and what the kernel was told.
// Every read style takes records through it, under the Reader's mutex.
//
// Claim positions are the buffer's positions for a forward buffer. An
// overwritable buffer is read in windows, each from the newest record
// down to where the last window began; claim positions keep growing from
// window to window, and bias maps them onto the buffer's.
type consumer struct {
	buf        *buffer
	cpu        int
	claims     readers.Claims
	head       uint64 // end of the records produced, as a claim position
	published  uint64 // data_tail the kernel has from us
	batchBytes uint64 // how much a loop reads between two visits to the mutex
	err        error  // sticky: a corrupt buffer stays corrupt

	overwrite bool
	bias      uint64 // claim position minus buffer position (overwritable)
	lastHead  uint64 // data_head when the last window was taken (overwritable)
}

type claim = readers.Claim

func newConsumer(buf *buffer, cpu int, overwrite bool) (consumer, error) {
	c := consumer{
		buf:        buf,
		cpu:        cpu,
		overwrite:  overwrite,
		batchBytes: min(buf.size/8, maxUnpublished),
	}
	if overwrite {
		c.lastHead = buf.loadHead(0)
		return c, nil
	}
	tail := buf.loadTail()
	if tail%recordAlign != 0 {
		return c, fmt.Errorf("%w: data_tail %d is not 8-byte aligned", ErrCorrupt, tail)
	}
	if err := buf.checkHead(buf.loadHead(tail), tail); err != nil {
		return c, err
	}
	c.claims = readers.NewClaims(tail)
	c.head, c.published = tail, tail
	return c, nil
}

// publish tells the kernel the consumer position (data_tail). An
// overwritable buffer has none: the kernel ignores it.
func (c *consumer) publish() {
	if c.overwrite {
		return
	}
	if pos := c.claims.ConsumerPos(); pos != c.published {
		c.buf.storeTail(pos)
		c.published = pos
	}
}

// produced reports whether records lie past the claim position, loading
// data_head if the last one loaded is used up. It records a corrupt head
// as the consumer's error.
func (c *consumer) produced() bool {
	if c.claims.Pos() == c.head && c.err == nil {
		if c.overwrite {
			c.loadWindow()
		} else {
			consumed := c.claims.ConsumerPos()
			head := c.buf.loadHead(consumed)
			if err := c.buf.checkHead(head, consumed); err != nil {
				c.err = c.cpuErr(err)
				return false
			}
			c.head = head
		}
	}
	return c.claims.Pos() != c.head
}

// loadWindow takes the records an overwritable buffer received since the
// last window: from data_head up to where the last window began, at most
// a buffer's worth. It waits until no claim of the last window is out, so
// that one bias serves every claim.
func (c *consumer) loadWindow() {
	if !c.claims.Empty() {
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

// ready reports whether a claim could find records: returned ones, or
// records produced since the last claim.
func (c *consumer) ready() bool {
	return c.claims.HasReturned() || c.produced()
}

// remaining is Record.Remaining after a record ending at end: the bytes
// produced past it, or -1 for an overwritable buffer, as cilium/ebpf says.
func (c *consumer) remaining(end uint64) int {
	if c.overwrite {
		return -1
	}
	return int(c.head - end)
}

// parseAt parses the record at claim position pos, records up to end
// being produced.
func (c *consumer) parseAt(pos, end uint64) (record, error) {
	return c.buf.parse(pos-c.bias, end-pos)
}

func (c *consumer) cpuErr(err error) error {
	return fmt.Errorf("CPU %d: %w", c.cpu, err)
}

// claimOne claims the next record for Read and consumes it at once (the
// caller copies it before it lets go of the mutex): the front of a
// returned claim, or the record at the claim position. ok is false if no
// record is there. err is a corrupt buffer (sticky) or, with ok, an
// unknown record type: the record is consumed and the caller returns err.
func (c *consumer) claimOne() (rec record, end uint64, ok bool, err error) {
	var start, limit uint64
	returned, fromReturned := c.claims.Returned()
	switch {
	case c.err != nil:
		return record{}, 0, false, c.err
	case fromReturned:
		start, limit = returned.Start, returned.End
	case !c.produced():
		return record{}, 0, false, c.err
	default:
		start, limit = c.claims.Pos(), c.head
	}
	rec, err = c.parseAt(start, limit)
	if err != nil {
		if !c.overwrite {
			c.err = c.cpuErr(err)
			return record{}, 0, false, c.err
		}
		// The oldest record of a full overwritable buffer is cut short by
		// the wrap: the window ends before it.
		rec.size = limit - start
		ok = false
	} else {
		ok = true
	}
	end = start + rec.size
	if fromReturned {
		c.claims.Take(start, end, false)
	} else {
		c.claims.Skip(end)
	}
	if ok && rec.typ != recordSample && rec.typ != recordLost {
		err = &unknownEventError{rec.typ}
	}
	return rec, end, ok, err
}

// claimBatch claims records for a loop: a returned claim whole, else the
// records at the claim position. A loop that reads alone takes all that
// is produced without a walk (data_head is always a record boundary);
// otherwise the claim stops past batchBytes, so others get their share.
func (c *consumer) claimBatch(alone bool) (cl claim, ok bool) {
	if r, some := c.claims.Returned(); some {
		return c.claims.Take(r.Start, r.End, true), true
	}
	if !c.produced() {
		return claim{}, false
	}
	next := c.head
	if !alone {
		next = c.scan(c.claims.Pos(), c.head)
	}
	return c.claims.Hold(next), true
}

// scan walks the records in [pos, end) by their sizes until batchBytes
// are covered, and returns where it stopped: a record boundary, or end.
// A size that cannot be right ends the walk at end; the loop that reads
// the batch finds the bad record and reports it.
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
