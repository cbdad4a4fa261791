//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapping holds the two mmap'd regions of a kernel ring buffer: the
// consumer page, read-write, and the producer page followed by the data
// area mapped twice, read-only (see ring.go for the layout).
type mapping struct {
	consumerPage []byte
	producerArea []byte
}

func mapRing(fd int, size uint64) (*mapping, *ring, error) {
	page := uint64(os.Getpagesize())
	if page+2*size > math.MaxInt {
		// A 32-bit process: the data area is mapped twice.
		return nil, nil, fmt.Errorf("mmap ring buffer of %d bytes: twice that is more than the address space: %w", size, unix.ENOMEM)
	}
	consumerPage, err := unix.Mmap(fd, 0, int(page), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap consumer page: %w", err)
	}
	producerArea, err := unix.Mmap(fd, int64(page), int(page+2*size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(consumerPage)
		return nil, nil, fmt.Errorf("mmap producer page and data area (%d bytes): %w", page+2*size, err)
	}
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

// unmap releases both regions.
func (m *mapping) unmap() error {
	var err1, err2 error
	if m.consumerPage != nil {
		err1 = unix.Munmap(m.consumerPage)
		m.consumerPage = nil
	}
	if m.producerArea != nil {
		err2 = unix.Munmap(m.producerArea)
		m.producerArea = nil
	}
	return errors.Join(err1, err2)
}
