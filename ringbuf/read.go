//go:build !windows

package ringbuf

import "github.com/ebpf-zc/ebpf/internal/readers"

// Read returns the next record, copied. It blocks until a record arrives,
// the deadline passes ([Reader.SetDeadline]), [Reader.Flush] or
// [Reader.Close] is called.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is [Reader.Read] into rec, reusing rec.RawSample's memory
// unless it is a view; when it returns, the kernel knows the record's
// space is free, unless a Peek view or loop body holds an older record
// (the package doc). A nil rec is refused.
func (r *Reader) ReadInto(rec *Record) error {
	if rec == nil {
		return errNilRecord("ReadInto")
	}
	c := &r.consumers[0]
	return r.engine.Read(func(int, bool) (readers.Take, error) {
		pos, h, ok := c.readyRecord() // the common case, inline
		end, length := pos+h.total(), h.length()
		if !ok {
			cl, clPos, clLength, take, err := c.takeOne(false)
			if take != readers.Copied {
				return take, err
			}
			pos, end, length = clPos, cl.End, clLength
		} else {
			c.claims.Skip(end)
		}
		rec.RawSample = r.copies.Destination(rec.RawSample, int(length))
		copy(rec.RawSample, c.ring.sample(pos, length))
		rec.Remaining = int(c.producerPos - end)
		c.publish()
		return readers.Copied, nil
	}, nil)
}
