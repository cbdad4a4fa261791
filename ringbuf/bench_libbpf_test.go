//go:build libbpf

package ringbuf_test

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

var errNoLibbpf = errors.New("libbpf unavailable")

// libbpf: the C peer, ring_buffer__consume with a C callback, one cgo call
// per drain.
type libbpfDrainer struct {
	rb    *C.struct_ring_buffer
	state *C.struct_drain // C memory: cgo forbids C keeping Go pointers
}

func openLibbpf(m *ebpf.Map) (drainer, error) {
	state := (*C.struct_drain)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_drain{}))))
	rb := C.new_ring(C.int(m.FD()), state)
	if rb == nil {
		C.free(unsafe.Pointer(state))
		return nil, errors.New("ring_buffer__new failed")
	}
	return &libbpfDrainer{rb: rb, state: state}, nil
}

func (d *libbpfDrainer) drain(n int, all bool) (uint64, error) {
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

func (d *libbpfDrainer) Close() error {
	C.ring_buffer__free(d.rb)
	C.free(unsafe.Pointer(d.state))
	return nil
}
