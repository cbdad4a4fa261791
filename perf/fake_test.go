//go:build linux

package perf

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// fakeBuffer is one CPU's perf buffer in the kernel's layout without a
// kernel: a memfd of one metadata page and size bytes of data, mapped
// once, so a read past the data area's end faults instead of passing.
type fakeBuffer struct {
	mem  []byte
	meta []byte
	data []byte
	size uint64
}

func newFakeBuffer(tb testing.TB, size int) *fakeBuffer {
	tb.Helper()
	page := unix.Getpagesize()
	fd, err := unix.MemfdCreate("perf-test", unix.MFD_CLOEXEC)
	if err != nil {
		tb.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(page+size)); err != nil {
		tb.Fatal(err)
	}
	// A guard page after the data area: a read past its end faults.
	mem, err := unix.Mmap(-1, 0, page+size+page, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Munmap(mem) })
	if _, err := unix.MmapPtr(fd, 0, unsafe.Pointer(&mem[0]), uintptr(page+size),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED); err != nil {
		tb.Fatal(err)
	}
	readers.AddRingMemory(mem[:page+size]) // as mapEvent does
	f := &fakeBuffer{mem: mem, meta: mem[:page], data: mem[page : page+size], size: uint64(size)}
	f.setU64(dataOffsetOffset, uint64(page))
	f.setU64(dataSizeOffset, uint64(size))
	return f
}

func (f *fakeBuffer) setU64(off int, v uint64) {
	*(*uint64)(unsafe.Pointer(&f.meta[off])) = v
}

func (f *fakeBuffer) u64(off int) uint64 {
	return *(*uint64)(unsafe.Pointer(&f.meta[off]))
}

// setPositions sets data_head and data_tail.
func (f *fakeBuffer) setPositions(head, tail uint64) {
	f.setU64(headOffset, head)
	f.setU64(tailOffset, tail)
}

// write writes a record of typ with body at pos (wrapping as the kernel
// does) and returns the position after it.
func (f *fakeBuffer) write(pos uint64, typ uint32, body []byte) uint64 {
	size := uint64(headerSize+len(body)+recordAlign-1) &^ (recordAlign - 1)
	rec := make([]byte, size)
	*(*uint32)(unsafe.Pointer(&rec[0])) = typ
	*(*uint16)(unsafe.Pointer(&rec[6])) = uint16(size)
	copy(rec[headerSize:], body)
	for i, b := range rec {
		f.data[(pos+uint64(i))&(f.size-1)] = b
	}
	return pos + size
}

// writeSample writes a raw sample of data, padded as the kernel pads it.
func (f *fakeBuffer) writeSample(pos uint64, data []byte) uint64 {
	raw := uint32(len(data)+4+7)&^7 - 4
	body := make([]byte, 4+raw)
	*(*uint32)(unsafe.Pointer(&body[0])) = raw
	copy(body[4:], data)
	return f.write(pos, recordSample, body)
}

// reader opens a Reader on the fake buffers, one per CPU.
func fakeReader(tb testing.TB, overwritable bool, fakes ...*fakeBuffer) (*Reader, error) {
	tb.Helper()
	poller, err := epoll.New()
	if err != nil {
		tb.Fatal(err)
	}
	res := &resources{poller: poller}
	var bufs []*buffer
	for i, f := range fakes {
		buf, err := newBuffer(unsafe.Pointer(&f.meta[0]), uint64(len(f.meta)+len(f.data)), uint64(len(f.meta)))
		if err != nil {
			res.free()
			return nil, err
		}
		bufs = append(bufs, buf)
		res.cpus = append(res.cpus, i)
	}
	r := &Reader{}
	if err := r.init(bufs, res, overwritable); err != nil {
		res.free()
		return nil, err
	}
	r.paused.Store(true)
	tb.Cleanup(func() { r.Close() })
	return r, nil
}
