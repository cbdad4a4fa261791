//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
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
	blanked      bool // producerArea now holds anonymous zero pages
	unmapped     bool
}

// consumerMapped reports whether the consumer position may still be
// written. (A test's fake ring has a zero mapping whose positions live in
// Go memory.)
func (m *mapping) consumerMapped() bool { return !m.unmapped }

func mapRing(fd int, size uint64) (*mapping, *ring, error) {
	page := uint64(os.Getpagesize())
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

// blank replaces the producer page and data area with anonymous zero
// pages at the same address, so that a view the caller still holds reads
// zeros instead of the ring's next records, and stays readable instead of
// faulting.
func (m *mapping) blank() error {
	if m.blanked || m.producerArea == nil {
		return nil
	}
	// The consumer page stays: a peeker's Consume may still publish to it
	// (peek.go). It holds the kernel ring until unmap.
	addr := uintptr(unsafe.Pointer(&m.producerArea[0]))
	_, _, errno := unix.Syscall6(unix.SYS_MMAP, addr, uintptr(len(m.producerArea)),
		unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uintptr(0), 0)
	if errno != 0 {
		return fmt.Errorf("replace ring mapping: %w", errno)
	}
	m.blanked = true
	return nil
}

// unmap releases both regions.
func (m *mapping) unmap() error {
	m.unmapped = true
	var err1, err2 error
	if m.consumerPage != nil {
		err1 = unix.Munmap(m.consumerPage)
		m.consumerPage = nil
	}
	if m.producerArea != nil {
		// Blanking kept the address and length, so x/sys still knows the
		// region and unmaps it as its own.
		err2 = unix.Munmap(m.producerArea)
		m.producerArea = nil
	}
	return errors.Join(err1, err2)
}
