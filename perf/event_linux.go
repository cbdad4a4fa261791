//go:build linux

package perf

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

func supported() error { return nil }

// openEvent opens a CPU's PERF_COUNT_SW_BPF_OUTPUT event sampling raw
// data, all bpf_perf_event_output accepts (kernel/trace/bpf_trace.c),
// waking a reader as ReaderOptions say. An offline CPU fails with ENODEV.
func openEvent(cpu, wakeupEvents, watermark int, overwritable bool) (int, error) {
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_BPF_OUTPUT,
		Sample_type: unix.PERF_SAMPLE_RAW,
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	if wakeupEvents > 0 {
		attr.Wakeup = uint32(wakeupEvents) // records
	} else {
		attr.Bits |= unix.PerfBitWatermark // bytes
		attr.Wakeup = uint32(max(watermark, 1))
	}
	if overwritable {
		attr.Bits |= unix.PerfBitWriteBackward
	}
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("perf_event_open on CPU %d: %w", cpu, err)
	}
	return fd, nil
}

func mapEvent(fd int, dataPages int, overwritable bool) ([]byte, *buffer, error) {
	page := os.Getpagesize()
	prot := unix.PROT_READ
	if !overwritable {
		prot |= unix.PROT_WRITE // data_tail is ours to write
	}
	mem, err := unix.Mmap(fd, 0, (1+dataPages)*page, prot, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap perf event buffer of %d pages: %w", 1+dataPages, err)
	}
	readers.AddRingMemory(mem)
	buf, err := newBuffer(unsafe.Pointer(&mem[0]), uint64(len(mem)), uint64(page))
	if err != nil {
		return nil, nil, errors.Join(err, unmap(mem))
	}
	return mem, buf, nil
}

func unmap(mem []byte) error { return unix.Munmap(mem) }

func closeFd(fd int) error { return unix.Close(fd) }

// errOffline reports whether a CPU's event failed because it is offline:
// the Reader leaves it out, as cilium/ebpf's does.
func errOffline(err error) bool { return errors.Is(err, unix.ENODEV) }
