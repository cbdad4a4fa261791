//go:build linux

// Package rawring reads a BPF ring buffer over its bare mapping, with no
// reader API in between. It holds the yardsticks that BenchmarkRead sets
// next to the ringbuf package's readers: Floor, the fastest correct Go
// loop we know over the mapping, and RawReader with its Lease, the
// technique of cilium/ebpf main's RawReader (merged after v0.22.0, not
// released), written here in our own words so the benchmark can measure it
// without depending on unreleased code.
//
// Neither is for users: they know one consumer, never wait, and keep no
// deadline. They exist so that a benchmark can say how far a reader is
// from what the hardware allows.
//
//	r, err := rawring.Map(events) // a BPF_MAP_TYPE_RINGBUF *ebpf.Map
//	if err != nil {
//		return err
//	}
//	defer r.Close()
//	sum, err := rawring.NewFloor(r).Drain(1000, false)
package rawring

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Kernel ABI of BPF_MAP_TYPE_RINGBUF (kernel/bpf/ringbuf.c and
// include/uapi/linux/bpf.h, unchanged since 5.8): the map fd maps as the
// consumer position's page (read-write), the producer position's page and
// then the data area twice in a row (read-only), so a record that wraps
// is contiguous. Positions only grow; pos & (size-1) is the offset. A
// record is an 8-byte header, whose first u32 is the length with the busy
// bit (still being written) and the discard bit, then the sample, padded
// to 8 bytes.
const (
	headerSize = 8
	busyBit    = 1 << 31
	discardBit = 1 << 30
	lengthMask = discardBit - 1
)

// Errors the readers return; compare with errors.Is.
var (
	// ErrEmpty means the consumer has caught up with the producer.
	ErrEmpty = errors.New("rawring: ring empty")
	// ErrBusy means the next record is reserved but not yet submitted.
	ErrBusy = errors.New("rawring: next record still being written")
	// ErrCorrupt means a position or a header cannot be right.
	ErrCorrupt = errors.New("rawring: ring corrupt")
)

// Ring is one mapping of a ring buffer: the consumer page, read-write,
// and the producer page with the data area mapped twice, read-only. It
// holds no read position: each reader keeps its own.
type Ring struct {
	consumerPage, producerArea []byte // the mmap'd regions; nil in tests

	consumerPos *uint64 // written by the reader, read by the kernel
	producerPos *uint64 // written by the kernel
	data        []byte  // the data area, twice: 2*size bytes
	size, mask  uint64
}

// Map maps m, which must be a BPF_MAP_TYPE_RINGBUF whose size is a power
// of two, as the kernel makes it.
func Map(m *ebpf.Map) (*Ring, error) {
	if m == nil || m.Type() != ebpf.RingBuf {
		return nil, errors.New("rawring: need a BPF_MAP_TYPE_RINGBUF map")
	}
	size := uint64(m.MaxEntries())
	page := os.Getpagesize()
	consumerPage, err := unix.Mmap(m.FD(), 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("rawring: mmap consumer page: %w", err)
	}
	producerArea, err := unix.Mmap(m.FD(), int64(page), page+2*int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(consumerPage)
		return nil, fmt.Errorf("rawring: mmap producer page and data (%d bytes): %w", page+2*int(size), err)
	}
	r, err := newRing(
		(*uint64)(unsafe.Pointer(&consumerPage[0])),
		(*uint64)(unsafe.Pointer(&producerArea[0])),
		producerArea[page:],
	)
	if err != nil {
		unix.Munmap(consumerPage)
		unix.Munmap(producerArea)
		return nil, err
	}
	r.consumerPage, r.producerArea = consumerPage, producerArea
	return r, nil
}

// newRing is a view of ring memory however it was mapped: data holds the
// data area twice in a row.
func newRing(consumerPos, producerPos *uint64, data []byte) (*Ring, error) {
	size := uint64(len(data) / 2)
	if size == 0 || size&(size-1) != 0 || uint64(len(data)) != 2*size {
		return nil, fmt.Errorf("%w: data area of %d bytes is not twice a power of two", ErrCorrupt, len(data))
	}
	return &Ring{consumerPos: consumerPos, producerPos: producerPos, data: data, size: size, mask: size - 1}, nil
}

// Close unmaps the ring; a reader of it must not be used afterwards.
func (r *Ring) Close() error {
	var errs []error
	for _, region := range [][]byte{r.consumerPage, r.producerArea} {
		if region != nil {
			errs = append(errs, unix.Munmap(region))
		}
	}
	r.consumerPage, r.producerArea, r.data = nil, nil, nil
	return errors.Join(errs...)
}

// loadProducer reads the producer position (an acquire load, so every
// header below it is visible) and checks it against consumer. It inlines:
// the error is built out of line.
func (r *Ring) loadProducer(consumer uint64) (uint64, error) {
	producer := atomic.LoadUint64(r.producerPos)
	if producer-consumer > r.size || producer%8 != 0 {
		return 0, r.badProducer(producer, consumer)
	}
	return producer, nil
}

func (r *Ring) badProducer(producer, consumer uint64) error {
	return fmt.Errorf("%w: producer position %d, consumer position %d, ring of %d bytes",
		ErrCorrupt, producer, consumer, r.size)
}

// pastProducer is the error for a header whose record would end beyond
// the producer position.
func pastProducer(length uint32, consumer, producer uint64) error {
	return fmt.Errorf("%w: record of %d bytes at position %d runs past the producer at %d",
		ErrCorrupt, length, consumer, producer)
}

// publish hands the space below consumer back to the kernel.
func (r *Ring) publish(consumer uint64) {
	atomic.StoreUint64(r.consumerPos, consumer)
}

// recordStep is how far a record whose header holds length moves the
// consumer position: the header and the sample, padded to 8 bytes.
func recordStep(length uint32) uint64 {
	return (uint64(length) + headerSize + 7) &^ 7
}
