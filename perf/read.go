package perf

import (
	"fmt"
	"os"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// Read returns the next record, copied. It blocks until a record arrives,
// the deadline passes, Flush or Close is called.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is [Reader.Read] into rec, reusing rec.RawSample's memory unless it is
// a view; when it returns, the kernel knows the record's space is free. A
// record of an unknown type is consumed, as an error ([IsUnknownEvent]).
// A nil rec is refused, and nothing is read.
func (r *Reader) ReadInto(rec *Record) error {
	if rec == nil {
		return fmt.Errorf("perf: ReadInto: nil *Record: %w", os.ErrInvalid)
	}
	var unknown error // a record of an unknown type: consumed, and returned
	err := r.engine.Read(func(i int, _ bool) (readers.Take, error) {
		return r.read.one(&r.buffers, i, rec, &unknown)
	}, nil)
	if err != nil {
		return err
	}
	return unknown
}

// readInto is ReadInto's memory: the view of the record it copies, the
// copy of one that wraps, and where its last copy went.
type readInto struct {
	rec     Record
	scratch []byte
	copies  readers.CopyCache
}

// one copies the next record of CPU i's buffer into rec, or reports its
// unknown type; it claims all that is produced, since nobody sees the
// claim before it ends.
func (ri *readInto) one(bs *buffers, i int, rec *Record, unknown *error) (readers.Take, error) {
	b, ok, err := bs.claimBatch(i, true, &ri.scratch)
	if !ok {
		return readers.None, err
	}
	read := false
	b.walkRecords(&ri.rec, func(got *Record, err error) bool {
		read, *unknown = true, err
		if err == nil {
			rec.Remaining, rec.LostSamples = got.Remaining, got.LostSamples
			rec.RawSample = ri.copies.Destination(rec.RawSample, len(got.RawSample))
			copy(rec.RawSample, got.RawSample)
		}
		rec.CPU = b.c.cpu
		return false
	})
	b.release()
	if read {
		return readers.Copied, nil
	}
	return readers.None, b.c.err
}
