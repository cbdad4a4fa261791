//go:build libbpf

// Package libbpfwrite writes records to a BPF user ring buffer with
// libbpf's user_ring_buffer__reserve and __submit from C: the C peer that
// BenchmarkWrite puts beside the ringbuf Writer. It needs cgo and
// libbpf-dev and builds with -tags libbpf; without the tag Open says so.
package libbpfwrite

/*
#cgo pkg-config: libbpf
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

// Writes count records of size bytes: payload's bytes, then the record's
// sequence number, from first on, in its first 8 bytes, as the Go modes
// write them. Returns how many were written; on a failed reserve it stops
// and leaves errno to the caller.
static int64_t write_records(struct user_ring_buffer *rb, const void *payload, uint32_t size,
			     uint64_t first, int64_t count) {
	for (int64_t i = 0; i < count; i++) {
		void *rec = user_ring_buffer__reserve(rb, size);
		if (!rec)
			return i;
		memcpy(rec, payload, size);
		uint64_t seq = first + i;
		memcpy(rec, &seq, sizeof(seq));
		user_ring_buffer__submit(rb, rec);
	}
	return count;
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/cilium/ebpf"
)

// Writer writes to a user ring buffer with libbpf, one cgo call per batch.
type Writer struct {
	rb      *C.struct_user_ring_buffer
	payload unsafe.Pointer // C memory: cgo forbids C keeping Go pointers
	size    int
}

// Open starts a libbpf user_ring_buffer on m for records of size bytes
// (at least 8) copied from payload.
func Open(m *ebpf.Map, payload []byte) (*Writer, error) {
	if len(payload) < 8 {
		return nil, fmt.Errorf("libbpf: records of %d bytes, want at least 8", len(payload))
	}
	rb, err := C.user_ring_buffer__new(C.int(m.FD()), nil)
	if rb == nil {
		return nil, fmt.Errorf("user_ring_buffer__new: %w", err)
	}
	return &Writer{rb: rb, payload: C.CBytes(payload), size: len(payload)}, nil
}

// Write writes count records numbered from first: every one, or an error
// saying where the ring was full.
func (w *Writer) Write(first uint64, count int) error {
	n, err := C.write_records(w.rb, w.payload, C.uint32_t(w.size), C.uint64_t(first), C.int64_t(count))
	if int(n) != count {
		if err == nil {
			err = syscall.ENOSPC
		}
		return fmt.Errorf("libbpf: user_ring_buffer__reserve after %d of %d records: %w", n, count, err)
	}
	return nil
}

// Close frees the user_ring_buffer.
func (w *Writer) Close() error {
	C.user_ring_buffer__free(w.rb)
	C.free(w.payload)
	return nil
}
