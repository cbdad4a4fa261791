//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// mapping holds a ring's consumer page, writable only by a reader, and its
// producer page and data area, writable only by a user ring buffer's writer.
type mapping struct {
	consumerPage []byte
	producerArea []byte
}

// mapRing maps a ring buffer for a reader, or for a writer if producer.
func mapRing(fd int, size uint64, producer bool) (*mapping, *ring, error) {
	consumerProt, producerProt := unix.PROT_READ|unix.PROT_WRITE, unix.PROT_READ
	if producer {
		consumerProt, producerProt = producerProt, consumerProt
	}
	page := uint64(os.Getpagesize())
	if page+2*size > math.MaxInt { // 32-bit: the data area is mapped twice
		return nil, nil, fmt.Errorf("mmap ring buffer of %d bytes: twice that is more than the address space: %w", size, unix.ENOMEM)
	}
	consumerPage, err := unix.Mmap(fd, 0, int(page), consumerProt, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap consumer page: %w", err)
	}
	producerArea, err := unix.Mmap(fd, int64(page), int(page+2*size), producerProt, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(consumerPage)
		return nil, nil, fmt.Errorf("mmap producer page and data area (%d bytes): %w", page+2*size, err)
	}
	readers.AddRingMemory(producerArea)
	m := &mapping{consumerPage: consumerPage, producerArea: producerArea}
	rg, err := newRing(
		(*uint64)(unsafe.Pointer(&consumerPage[0])),
		(*uint64)(unsafe.Pointer(&producerArea[0])),
		unsafe.Pointer(&producerArea[page]),
		size,
	)
	if err != nil {
		m.unmap()
		return nil, nil, err
	}
	return m, rg, nil
}

func (m *mapping) unmap() error {
	var err error
	for _, mem := range []*[]byte{&m.consumerPage, &m.producerArea} {
		if *mem != nil {
			err = errors.Join(err, unix.Munmap(*mem))
			*mem = nil
		}
	}
	return err
}

// retire makes a writer's ring, touched without a lock, anonymous memory until
// unmap: an access racing with Close neither faults nor reaches the map.
func (m *mapping) retire() error {
	var err error
	for _, kept := range []*[]byte{&m.consumerPage, &m.producerArea} {
		if *kept == nil {
			continue
		}
		_, errFixed := unix.MmapPtr(-1, 0, unsafe.Pointer(&(*kept)[0]), uintptr(len(*kept)),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED|unix.MAP_NORESERVE)
		if errFixed != nil {
			err = errors.Join(err, fmt.Errorf("replace the mapping with anonymous memory: %w", errFixed))
		}
	}
	return err
}
