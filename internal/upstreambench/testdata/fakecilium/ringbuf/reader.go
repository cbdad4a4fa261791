// Package ringbuf is a fake of cilium/ebpf's ringbuf package: the exported
// names of its reading API on main, with bodies that do nothing.
package ringbuf

import (
	"time"

	"github.com/cilium/ebpf"
)

// Record is a sample.
type Record struct {
	RawSample []byte
	Remaining int
	cpu       int
}

// Reader reads records.
type Reader struct{}

// NewReader opens a reader.
func NewReader(*ebpf.Map) (*Reader, error) { return &Reader{}, nil }

// ReadInto reads a record into rec.
func (r *Reader) ReadInto(rec *Record) error { return nil }

// SetDeadline sets a deadline.
func (r *Reader) SetDeadline(time.Time) {}

// Close closes the reader.
func (r *Reader) Close() error { return nil }

// readLocked is not exported: detection must pass it over.
func (r *Reader) readLocked() {}
