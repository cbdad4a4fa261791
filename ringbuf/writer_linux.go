//go:build linux

package ringbuf

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapUserRing maps a user ring buffer for writing: the consumer page
// read-only (the kernel refuses a writable mapping of page 0), the
// producer page and the data area, mapped twice, read-write (see
// writer.go for the layout).
func mapUserRing(fd int, size uint64) (*mapping, *ring, error) {
	page := uint64(os.Getpagesize())
	consumerPage, err := unix.Mmap(fd, 0, int(page), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap consumer page: %w", err)
	}
	producerArea, err := unix.Mmap(fd, int64(page), int(page+2*size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
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

// retire gives the ring back to the kernel but keeps its addresses valid:
// the consumer page is unmapped, and the producer page and data area are
// replaced, in one mmap with MAP_FIXED, by private anonymous memory. A
// Submit racing with Close, or a stale reservation written after it, then
// lands in memory nobody reads instead of faulting or reaching the map.
// unmap frees the range later.
func (m *mapping) retire() error {
	var err error
	if m.consumerPage != nil {
		err = unix.Munmap(m.consumerPage)
		m.consumerPage = nil
	}
	if m.producerArea != nil {
		_, errFixed := unix.MmapPtr(-1, 0, unsafe.Pointer(&m.producerArea[0]), uintptr(len(m.producerArea)),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED|unix.MAP_NORESERVE)
		if errFixed != nil {
			err = fmt.Errorf("replace the data area with anonymous memory: %w", errFixed)
		}
	}
	return err
}
