package perf

import (
	"fmt"
	"io"
	"sync/atomic"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/sentinel"
	"github.com/ebpf-zc/ebpf/internal/ulong"
)

// Kernel ABI of a perf event buffer (include/uapi/linux/perf_event.h,
// kernel/events/ring_buffer.c; checked from 4.4 to 6.18):
//   - the event fd maps a metadata page then 2^n data pages, once: a record
//     may wrap. The page holds the u64s data_head, data_tail, data_offset
//     and data_size (the last two 0 before 4.1: data follows the page);
//   - head and tail only grow (a 32-bit kernel's head wraps at 2^32); a
//     position's offset is pos & (data_size-1). The kernel stores head after
//     the records below it (smp_wmb); we store-release tail after reading,
//     and in a read-write mapping the kernel never writes past it, counting
//     what it refuses as lost;
//   - records are 8-byte aligned (perf_prepare_sample), so the header
//     {u32 type; u16 misc; u16 size of the whole record} never wraps;
//   - SAMPLE with PERF_SAMPLE_RAW: header, u32 size, raw data padded so that
//     4 + size is a multiple of 8 (counted in size, handed out as
//     cilium/ebpf does); LOST: header, u64 id, u64 lost;
//   - write_backward (overwritable, mapped read-only): the kernel ignores
//     tail and moves head down; the newest record starts at head, and the
//     oldest may be cut short by the wrap.
const (
	headOffset       = 1024
	tailOffset       = 1032
	dataOffsetOffset = 1040
	dataSizeOffset   = 1048

	headerSize  = 8
	recordAlign = 8

	recordLost   = 2
	recordSample = 9

	sampleHeaderSize = headerSize + 4  // header, u32 size
	lostRecordSize   = headerSize + 16 // header, u64 id, u64 lost
)

// ErrCorrupt is returned when a CPU buffer's positions or a record header
// contradict the kernel's layout; the Reader stops at the bad record. It
// matches [io.ErrUnexpectedEOF], cilium/ebpf's error for a truncated record.
var ErrCorrupt error = sentinel.New("perf event buffer corrupt", io.ErrUnexpectedEOF)

// header is a record's struct perf_event_header.
type header struct {
	typ  uint32
	size uint16
}

// buffer is a view of one CPU's perf event buffer, however it was mapped.
type buffer struct {
	head *uint64 // data_head, written by the kernel
	tail *uint64 // data_tail, written by us
	data unsafe.Pointer
	size uint64 // bytes in the data area, a power of two
	mask uint64
}

// newBuffer returns the buffer whose metadata page starts at meta.
func newBuffer(meta unsafe.Pointer, mapped uint64, pageSize uint64) (*buffer, error) {
	if err := ulong.Err(); err != nil {
		return nil, err // positions would be read at a guessed width
	}
	offset := *(*uint64)(unsafe.Add(meta, dataOffsetOffset))
	size := *(*uint64)(unsafe.Add(meta, dataSizeOffset))
	if offset == 0 && size == 0 { // before Linux 4.1
		offset, size = pageSize, mapped-pageSize
	}
	if size == 0 || size&(size-1) != 0 || offset < dataSizeOffset+8 || offset > mapped || size > mapped-offset {
		return nil, fmt.Errorf("%w: data area of %d bytes at offset %d in a mapping of %d", ErrCorrupt, size, offset, mapped)
	}
	return &buffer{
		head: (*uint64)(unsafe.Add(meta, headOffset)),
		tail: (*uint64)(unsafe.Add(meta, tailOffset)),
		data: unsafe.Add(meta, offset),
		size: size,
		mask: size - 1,
	}, nil
}

// loadHead reads data_head; near widens a 32-bit kernel's.
func (b *buffer) loadHead(near uint64) uint64 {
	head := atomic.LoadUint64(b.head)
	if ulong.Process32 && ulong.Is32 {
		return ulong.Widen(near, uint32(head))
	}
	return head
}

func (b *buffer) loadTail() uint64     { return atomic.LoadUint64(b.tail) }
func (b *buffer) storeTail(pos uint64) { atomic.StoreUint64(b.tail, pos) }

func (b *buffer) headerAt(pos uint64) header {
	p := unsafe.Add(b.data, pos&b.mask)
	return header{typ: *(*uint32)(p), size: *(*uint16)(unsafe.Add(p, 6))}
}

// u32At reads the u32 at pos, 8-byte aligned.
func (b *buffer) u32At(pos uint64) uint32 {
	return *(*uint32)(unsafe.Add(b.data, pos&b.mask))
}

// view returns the length bytes at pos as a slice of the mapping, its
// capacity its length, or as a copy in scratch if they wrap.
func (b *buffer) view(pos uint64, length uint32, scratch *[]byte) []byte {
	off := pos & b.mask
	if first := b.size - off; uint64(length) > first {
		buf := append((*scratch)[:0], unsafe.Slice((*byte)(unsafe.Add(b.data, off)), first)...)
		buf = append(buf, unsafe.Slice((*byte)(b.data), uint64(length)-first)...)
		*scratch = buf
		return buf[:length:length]
	}
	return unsafe.Slice((*byte)(unsafe.Add(b.data, off)), length)
}

type record struct {
	typ  uint32
	size uint64 // bytes the record occupies
	lost uint64
}

// parse reads the record at pos, avail bytes being produced: ErrCorrupt
// if its size or a field does not fit.
func (b *buffer) parse(pos, avail uint64) (record, error) {
	h := b.headerAt(pos)
	r := record{typ: h.typ, size: uint64(h.size)}
	if r.size < headerSize || r.size%recordAlign != 0 || r.size > avail {
		return r, fmt.Errorf("%w: record at position %d (type %d) claims %d bytes, %d produced",
			ErrCorrupt, pos, h.typ, h.size, avail)
	}
	switch h.typ {
	case recordSample:
		if r.size < sampleHeaderSize {
			return r, fmt.Errorf("%w: sample at position %d of %d bytes has no size field", ErrCorrupt, pos, r.size)
		}
		if n := b.u32At(pos + headerSize); uint64(n) > r.size-sampleHeaderSize {
			return r, fmt.Errorf("%w: sample at position %d claims %d bytes in a record of %d",
				ErrCorrupt, pos, n, r.size)
		}
	case recordLost:
		if r.size < lostRecordSize {
			return r, fmt.Errorf("%w: lost-samples record at position %d of %d bytes", ErrCorrupt, pos, r.size)
		}
		r.lost = *(*uint64)(unsafe.Add(b.data, (pos+headerSize+8)&b.mask))
	}
	return r, nil
}

func (b *buffer) checkHead(head, tail uint64) error {
	if head-tail > b.size || (head|tail)%recordAlign != 0 {
		return fmt.Errorf("%w: data_head %d, data_tail %d, buffer of %d bytes", ErrCorrupt, head, tail, b.size)
	}
	return nil
}
