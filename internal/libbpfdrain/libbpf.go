//go:build libbpf

// Package libbpfdrain drains a BPF ring buffer with libbpf's
// ring_buffer__consume and a C callback: the C peer that BenchmarkRead
// puts in the same table as the Go readers. It needs cgo and libbpf-dev
// and builds with -tags libbpf; without the tag Open says so.
package libbpfdrain

/*
#cgo pkg-config: libbpf
#include <stdint.h>
#include <stdlib.h>
#include <bpf/libbpf.h>

// What the C callback keeps between samples.
struct drain {
	uint64_t count, limit, sum;
	int all;
};

// The same touch as the Go modes. Returning a negative value makes
// ring_buffer__consume stop after this sample, which it has already
// consumed: that is how a drain stops at exactly limit records.
static int on_sample(void *ctx, void *data, size_t len) {
	struct drain *d = ctx;
	if (d->all) {
		const uint64_t *w = data;
		for (size_t i = 0; i + 8 <= len; i += 8)
			d->sum += *w++;
	} else {
		d->sum += *(const uint64_t *)data;
	}
	if (++d->count == d->limit)
		return -1;
	return 0;
}

static struct ring_buffer *new_ring(int fd, struct drain *d) {
	return ring_buffer__new(fd, on_sample, d, NULL);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
)

// Drainer consumes a ring with libbpf, one cgo call per drain.
type Drainer struct {
	rb    *C.struct_ring_buffer
	state *C.struct_drain // C memory: cgo forbids C keeping Go pointers
}

// Open starts a libbpf ring_buffer on m.
func Open(m *ebpf.Map) (*Drainer, error) {
	state := (*C.struct_drain)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_drain{}))))
	rb := C.new_ring(C.int(m.FD()), state)
	if rb == nil {
		C.free(unsafe.Pointer(state))
		return nil, errors.New("ring_buffer__new failed")
	}
	return &Drainer{rb: rb, state: state}, nil
}

// Drain consumes exactly n records and returns the sum of their first
// 8-byte words, or with all of every 8-byte word, as the Go modes do.
func (d *Drainer) Drain(n int, all bool) (uint64, error) {
	d.state.count, d.state.limit, d.state.sum = 0, C.uint64_t(n), 0
	d.state.all = 0
	if all {
		d.state.all = 1
	}
	for d.state.count < C.uint64_t(n) {
		before := d.state.count
		C.ring_buffer__consume(d.rb)
		if d.state.count == before {
			return 0, fmt.Errorf("libbpf: ring empty after %d of %d records", before, n)
		}
	}
	return uint64(d.state.sum), nil
}

// Close frees the ring_buffer.
func (d *Drainer) Close() error {
	C.ring_buffer__free(d.rb)
	C.free(unsafe.Pointer(d.state))
	return nil
}
