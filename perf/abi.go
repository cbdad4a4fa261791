package perf

import (
	"fmt"
	"io"
	"sync/atomic"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/sentinel"
	"github.com/ebpf-zc/ebpf/internal/ulong"
)

// Kernel ABI of a perf event buffer written by bpf_perf_event_output
// (include/uapi/linux/perf_event.h and kernel/events/ring_buffer.c,
// unchanged in these respects since 4.4; checked against Linux 6.18):
//   - the event fd is mmap'd as one metadata page, struct
//     perf_event_mmap_page, followed by the data area of 2^n pages, mapped
//     once: a record that wraps around the end of the data area is split
//     in two, unlike a BPF ring buffer's;
//   - the metadata page holds data_head at byte 1024, data_tail at 1032,
//     data_offset at 1040 and data_size at 1048 (the struct pads its first
//     part to 1 KiB), all u64; data_offset and data_size name the data area
//     (kernels before 4.1 leave them 0: the area is then the rest of the
//     mapping);
//   - data_head and data_tail are positions that only grow (on a 32-bit
//     kernel data_head wraps at 2^32, see loadHead); a position's
//     offset in the data area is pos & (data_size-1). The kernel writes a
//     whole record, then stores data_head (perf_output_put_handle, with
//     smp_wmb before): a reader loads data_head, issues a read barrier,
//     and finds complete records below it (the uapi header's comment on
//     data_head);
//   - the reader stores data_tail after it read the records below: with a
//     read-write mapping the kernel never writes past it (perf_output_begin
//     refuses, counts the record lost and later writes a PERF_RECORD_LOST);
//     the store must be ordered after the reads (smp_mb in the uapi
//     comment, a release store here);
//   - every record starts with struct perf_event_header {u32 type; u16
//     misc; u16 size}, size counting the header and every byte after it;
//     records are 8-byte aligned (perf_prepare_sample rounds a raw sample
//     up, kernel/events/core.c), so a header never wraps;
//   - PERF_RECORD_SAMPLE (9) with sample_type PERF_SAMPLE_RAW, the only
//     field bpf_perf_event_output asks for: the header, a u32 size, then
//     size bytes of raw data, padded so that 4 + size is a multiple of 8
//     (the padding is part of size: cilium/ebpf hands it out too);
//   - PERF_RECORD_LOST (2): the header, u64 id, u64 lost, the number of
//     records the kernel could not place since the last one;
//   - with write_backward (an overwritable buffer, mapped read-only), the
//     kernel ignores data_tail, writes downwards and moves data_head down:
//     the newest record starts at data_head, older ones follow it in
//     memory, and the oldest one in the area may be cut short by the wrap.
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

// ErrCorrupt is returned when a per-CPU buffer's positions or a record
// header contradict the kernel's layout. The Reader stops at the bad
// record of that buffer. errors.Is also matches it with
// io.ErrUnexpectedEOF, which cilium/ebpf returns for a truncated record.
var ErrCorrupt error = sentinel.New("perf event buffer corrupt", io.ErrUnexpectedEOF)

// header is a record's struct perf_event_header, as the kernel left it.
type header struct {
	typ  uint32
	size uint16
}

// buffer is a view of one CPU's perf event buffer: its metadata page and
// its data area. It knows the layout and checks what it reads, but not
// how the memory was mapped: the reader maps a perf event, the tests map a
// memfd.
type buffer struct {
	head *uint64 // data_head, written by the kernel
	tail *uint64 // data_tail, written by us
	data unsafe.Pointer
	size uint64 // bytes in the data area, a power of two
	mask uint64
}

// newBuffer returns the buffer whose metadata page starts at meta, in a
// mapping of mapped bytes.
func newBuffer(meta unsafe.Pointer, mapped uint64, pageSize uint64) (*buffer, error) {
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

// loadHead reads data_head. An atomic load is the read barrier the
// kernel asks for: every record below the head is visible after it. A
// 32-bit kernel stores a head that wraps at 2^32 (see internal/ulong):
// near, a position less than 2 GiB from the head (data_tail, or the head
// loaded last), widens it to the reader's 64-bit positions.
func (b *buffer) loadHead(near uint64) uint64 {
	head := atomic.LoadUint64(b.head)
	if ulong.Process32 {
		if ulong.Is32 {
			return ulong.Widen(near, uint32(head))
		}
	}
	return head
}

// loadTail reads data_tail, the position the kernel has from the reader.
func (b *buffer) loadTail() uint64 {
	return atomic.LoadUint64(b.tail)
}

// storeTail publishes pos as data_tail, after every read below it.
func (b *buffer) storeTail(pos uint64) {
	atomic.StoreUint64(b.tail, pos)
}

// headerAt reads the header of the record at pos, which is 8-byte aligned.
func (b *buffer) headerAt(pos uint64) header {
	p := unsafe.Add(b.data, pos&b.mask)
	return header{
		typ:  *(*uint32)(p),
		size: *(*uint16)(unsafe.Add(p, 6)),
	}
}

// u32At and u64At read a field at an 8-byte aligned position.
func (b *buffer) u32At(pos uint64) uint32 {
	return *(*uint32)(unsafe.Add(b.data, pos&b.mask))
}

func (b *buffer) u64At(pos uint64) uint64 {
	return *(*uint64)(unsafe.Add(b.data, pos&b.mask))
}

// view returns the length bytes at pos as a slice of the mapping, or, if
// they wrap around the end of the data area, as a copy in scratch (grown
// if needed). length is at most the data area's size. The view's capacity
// equals its length, so an append copies.
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

// mapped returns the data area, as the views of its records lie in it.
func (b *buffer) mapped() []byte {
	return unsafe.Slice((*byte)(b.data), b.size)
}

// copyOut copies the length bytes at pos into dst, which holds them.
func (b *buffer) copyOut(dst []byte, pos uint64) {
	off := pos & b.mask
	n := copy(dst, unsafe.Slice((*byte)(unsafe.Add(b.data, off)), min(uint64(len(dst)), b.size-off)))
	copy(dst[n:], unsafe.Slice((*byte)(b.data), len(dst)-n))
}

// record is what a header and the fields after it say: a sample's raw
// data (its position and length) or a count of lost samples.
type record struct {
	typ     uint32
	size    uint64 // bytes the record occupies
	dataPos uint64 // a sample's raw data
	dataLen uint32
	lost    uint64
}

// parse reads the record at pos, of which avail bytes were produced. It
// returns an error wrapping ErrCorrupt if the header claims less than a
// header, more than avail or a misaligned size, or a field that does not
// fit in the record. A type other than sample or lost is returned as it
// is, for the caller to skip.
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
		r.dataLen = b.u32At(pos + headerSize)
		if uint64(r.dataLen) > r.size-sampleHeaderSize {
			return r, fmt.Errorf("%w: sample at position %d claims %d bytes in a record of %d",
				ErrCorrupt, pos, r.dataLen, r.size)
		}
		r.dataPos = pos + sampleHeaderSize
	case recordLost:
		if r.size < lostRecordSize {
			return r, fmt.Errorf("%w: lost-samples record at position %d of %d bytes", ErrCorrupt, pos, r.size)
		}
		r.lost = b.u64At(pos + headerSize + 8)
	}
	return r, nil
}

// checkHead checks a loaded data_head against the position read up to.
func (b *buffer) checkHead(head, tail uint64) error {
	if head-tail > b.size || head%recordAlign != 0 {
		return fmt.Errorf("%w: data_head %d, data_tail %d, buffer of %d bytes", ErrCorrupt, head, tail, b.size)
	}
	return nil
}
