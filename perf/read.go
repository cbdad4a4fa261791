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

// ReadInto is [Reader.Read] into rec, reusing rec.RawSample's memory unless
// it is a view; when it returns, the kernel knows the record's space is
// free, unless a loop body holds an older record of its CPU. An unknown
// type is consumed, as an error ([IsUnknownEvent]); a nil rec is refused.
func (r *Reader) ReadInto(rec *Record) error {
	if rec == nil {
		return fmt.Errorf("perf: ReadInto: nil *Record: %w", os.ErrInvalid)
	}
	var unknown error
	err := r.engine.Read(func(i int, _ bool) (readers.Take, error) {
		return r.reads.one(&r.buffers, i, rec, &unknown)
	}, nil)
	if err != nil {
		return err
	}
	return unknown
}
