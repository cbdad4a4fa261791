package ringbuf

import (
	"fmt"
	"io"
	"sync/atomic"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/sentinel"
	"github.com/ebpf-zc/ebpf/internal/ulong"
)

// Kernel ABI of BPF_MAP_TYPE_RINGBUF (kernel/bpf/ringbuf.c and
// include/uapi/linux/bpf.h, unchanged since 5.8):
//   - the map fd is mmap'd as: page 0, the consumer position (read-write);
//     page 1, the producer position (read-only); from page 2 on, the data
//     area, mapped twice back to back, so a wrapping record is contiguous;
//   - both positions are unsigned longs that only grow (32 bits on a 32-bit
//     kernel, wrapping at 2^32); a position's offset is pos & (size-1);
//   - a record starts with an 8-byte header {u32 len; u32 pg_off}, len
//     carrying BPF_RINGBUF_BUSY_BIT while the producer writes and
//     BPF_RINGBUF_DISCARD_BIT if discarded; it occupies round_up(len+8, 8);
//   - the producer store-releases producer_pos after writing the busy
//     header, and clears the busy bit (xchg) on submit or discard;
//   - on submit the kernel wakes the map's pollers only if the consumer
//     position equals the record's (or on BPF_RB_FORCE_WAKEUP): a reader
//     must publish before it sleeps.
const (
	headerSize  = 8
	busyBit     = 1 << 31
	discardBit  = 1 << 30
	lengthMask  = discardBit - 1
	recordAlign = 8
)

// rbOverwrite is the map flag BPF_F_RB_OVERWRITE, (1U << 19) in
// include/uapi/linux/bpf.h since Linux 6.19 (commit feeaf1346f80, "bpf: Add
// overwrite mode for BPF ring buffer"). A ring created with it does not
// follow the layout above once full: the producer overwrites the oldest
// records, past the consumer position, and keeps their start in a new
// overwrite_pos (kernel/bpf/ringbuf.c). Older kernels refuse the flag at
// map creation with EINVAL (RINGBUF_CREATE_FLAG_MASK is BPF_F_NUMA_NODE).
const rbOverwrite = 1 << 19

// Kernel ABI of an overwrite-mode ring (struct bpf_ringbuf and
// __bpf_ringbuf_reserve in kernel/bpf/ringbuf.c, Linux 6.19+, unchanged
// in 7.x):
//   - the mapping is the one above: the consumer page is the only one
//     user space may write (ringbuf_map_mmap_kern); the producer page holds
//     three unsigned longs, producer_pos, pending_pos and overwrite_pos,
//     in that order (overwrite_pos was placed after pending_pos so that
//     pending_pos kept its offset), so overwrite_pos is at two words into
//     the producer page, read-only to user space;
//   - overwrite_pos is the start of the oldest record not overwritten: a
//     reservation that would leave producer_pos more than size-1 bytes
//     past it moves it forward, record by record along their headers, to
//     make room; it only grows, and always sits on a record's start;
//   - the reservation stores overwrite_pos (WRITE_ONCE, under the ring's
//     spinlock) before it store-releases producer_pos, so overwrite_pos
//     loaded after an acquire load of producer_pos is at least the one
//     that producer position was published with; the producer writes the
//     space it took over only after both (the record's header under the
//     lock, its payload once bpf_ringbuf_reserve returned), with no full
//     barrier after the overwrite_pos store: x86's total store order shows
//     every observer that store first; a weakly ordered CPU (arm64) may
//     show a payload store before it, since a store-release orders only
//     what precedes it;
//   - a reservation never overwrites a record still busy: the room is
//     checked against pending_pos (the oldest busy record) alone, as in
//     normal mode, and never against consumer_pos;
//   - so consumer_pos means nothing to the producer: it only serves
//     BPF_RB_AVAIL_DATA (producer_pos - max(consumer_pos, overwrite_pos)),
//     poll, and the wake-up at commit (records committed with
//     BPF_RB_NO_WAKEUP wake nobody).
//
// A record at or past overwrite_pos as loaded after it was read has not
// been overwritten: every byte the producer rewrites lies before the
// overwrite_pos it stored first (on x86; on arm64 as far as the stores
// above are seen in order).

// ErrCorrupt is returned when the ring's positions or a record header
// contradict the kernel's layout; the Reader stops at the bad record. It
// matches [io.ErrUnexpectedEOF], cilium/ebpf's error then.
var ErrCorrupt error = sentinel.New("ring buffer corrupt", io.ErrUnexpectedEOF)

// overwritePosition returns the ring's overwrite_pos word, at two
// position words past producer_pos (see above). Only an overwrite-mode
// ring's is meaningful; a normal ring's stays zero.
func (rg *ring) overwritePosition() position {
	word := uintptr(8)
	if ulong.Process32 && ulong.Is32 {
		word = 4
	}
	return position{word: unsafe.Add(rg.producerPos.word, 2*word)}
}

// header is a record's first word, as the producer left it.
type header uint32

func (h header) busy() bool      { return h&busyBit != 0 }
func (h header) discarded() bool { return h&discardBit != 0 }
func (h header) length() uint32  { return uint32(h) & lengthMask }

// total is the space the record occupies, header and padding included.
func (h header) total() uint64 {
	return (uint64(h.length()) + headerSize + recordAlign - 1) &^ (recordAlign - 1)
}

// ring is a view of a ring buffer's memory. It knows the layout, not how
// the memory was mapped (a kernel map, or a test's memfd).
type ring struct {
	consumerPos position // written by us, read by the kernel
	producerPos position // written by the kernel
	dataArea
	size uint64 // bytes in the data area, a power of two
}

// dataArea is what a walk needs: two words a loop keeps in registers.
type dataArea struct {
	data unsafe.Pointer
	mask uint64 // size-1
}

// position is one of the kernel's position words. The reader counts in
// 64-bit positions; a 32-bit kernel's word is widened on load
// (internal/ulong) and truncated on store.
type position struct {
	word unsafe.Pointer
}

// load reads the word with acquire semantics; near is a position less
// than 2 GiB from the one stored.
func (p position) load(near uint64) uint64 {
	if ulong.Process32 && ulong.Is32 {
		return ulong.Widen(near, atomic.LoadUint32((*uint32)(p.word)))
	}
	return atomic.LoadUint64((*uint64)(p.word))
}

// store writes pos with release semantics.
func (p position) store(pos uint64) {
	if ulong.Process32 && ulong.Is32 {
		atomic.StoreUint32((*uint32)(p.word), uint32(pos))
		return
	}
	atomic.StoreUint64((*uint64)(p.word), pos)
}

// newRing returns the ring whose position words are at consumerPos and
// producerPos.
func newRing(consumerPos, producerPos *uint64, data unsafe.Pointer, size uint64) (*ring, error) {
	if err := ulong.Err(); err != nil {
		return nil, err // positions would be read at a guessed width
	}
	if size == 0 || size&(size-1) != 0 {
		return nil, fmt.Errorf("%w: data area of %d bytes is not a power of two", ErrCorrupt, size)
	}
	return &ring{
		consumerPos: position{word: unsafe.Pointer(consumerPos)},
		producerPos: position{word: unsafe.Pointer(producerPos)},
		dataArea:    dataArea{data: data, mask: size - 1},
		size:        size,
	}, nil
}

// loadProducer reads the producer position with acquire semantics, so that
// every header below it is visible, and checks it: not below near, the
// reader's consumer position, and within a ring of the kernel's, loaded
// after it (another reader of the map may have moved that one on).
func (rg *ring) loadProducer(near uint64) (uint64, error) {
	producer := rg.producerPos.load(near)
	consumer := rg.consumerPos.load(near)
	if int64(producer-near) < 0 || int64(producer-consumer) > int64(rg.size) || producer%recordAlign != 0 {
		return 0, fmt.Errorf("%w: producer position %d, consumer position %d, ring of %d bytes",
			ErrCorrupt, producer, consumer, rg.size)
	}
	return producer, nil
}

// loadConsumer reads the consumer position the kernel holds (below 4 GiB
// on a 32-bit kernel: the reader's positions start there).
func (rg *ring) loadConsumer() uint64 {
	return rg.consumerPos.load(0)
}

// publishConsumer store-releases pos as the consumer position, unless the
// kernel holds a later one (another reader of the map consumed further).
func (rg *ring) publishConsumer(pos uint64) {
	if int64(pos-rg.consumerPos.load(pos)) > 0 {
		rg.consumerPos.store(pos)
	}
}

// headerAt reads the header at pos, with acquire semantics so that a
// committed record's payload is visible.
func (a dataArea) headerAt(pos uint64) header {
	return header(atomic.LoadUint32((*uint32)(unsafe.Add(a.data, pos&a.mask))))
}

// corrupt is the error for the record at pos whose header h claims more
// than the end-pos bytes produced.
func (rg *ring) corrupt(pos, end uint64, h header) error {
	return fmt.Errorf("%w: record at position %d claims %d bytes, only %d produced",
		ErrCorrupt, pos, h.length(), end-pos-headerSize)
}

// sample returns the payload of the record at pos as a slice of the
// mapping, its capacity its length, so that an append copies.
func (a dataArea) sample(pos uint64, length uint32) []byte {
	p := unsafe.Add(a.data, pos&a.mask+headerSize)
	return unsafe.Slice((*byte)(p), length)
}
