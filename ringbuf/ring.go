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

// rbOverwrite is BPF_F_RB_OVERWRITE, (1U << 19) in include/uapi/linux/bpf.h
// since Linux 6.19 (commit feeaf1346f80); older kernels refuse it with
// EINVAL. Kernel ABI of such a ring (struct bpf_ringbuf and
// __bpf_ringbuf_reserve in kernel/bpf/ringbuf.c, 6.19 to 7.x):
//   - the mapping is the one above; the producer page holds three unsigned
//     longs, producer_pos, pending_pos and overwrite_pos, read-only;
//   - once the ring is full the producer overwrites the oldest records,
//     past consumer_pos, which it ignores but for BPF_RB_AVAIL_DATA, poll
//     and the wake-up; overwrite_pos, the start of the oldest record not
//     overwritten, only grows, from one record's start to another's;
//   - a reservation stores overwrite_pos (under the ring's spinlock) before
//     it store-releases producer_pos, and writes the space it took over
//     only after both, never a record still busy (pending_pos). There is
//     no full barrier after the overwrite_pos store: x86 shows it first to
//     every observer, a weakly ordered CPU (arm64) may show a payload
//     store before it.
//
// So a record at or past overwrite_pos as loaded after the record was
// read had not been overwritten (on arm64, as far as those stores are
// seen in order).
const rbOverwrite = 1 << 19

// ErrCorrupt is returned when the ring's positions or a record header
// contradict the kernel's layout; the Reader stops at the bad record. It
// matches [io.ErrUnexpectedEOF], cilium/ebpf's error then.
var ErrCorrupt error = sentinel.New("ring buffer corrupt", io.ErrUnexpectedEOF)

// overwritePosition returns the ring's overwrite_pos word, two words past
// producer_pos; a normal ring's stays zero.
func (rg *ring) overwritePosition() position {
	word := uintptr(8)
	if ulong.Process32 && ulong.Is32 {
		word = 4
	}
	return position{word: unsafe.Add(rg.producerPos.word, 2*word)}
}

// header is a record's first word.
type header uint32

func (h header) busy() bool      { return h&busyBit != 0 }
func (h header) discarded() bool { return h&discardBit != 0 }
func (h header) length() uint32  { return uint32(h) & lengthMask }

// total is the space the record takes, header and padding included.
func (h header) total() uint64 {
	return (uint64(h.length()) + headerSize + recordAlign - 1) &^ (recordAlign - 1)
}

// ring is a view of a ring buffer's memory, however it was mapped.
type ring struct {
	consumerPos position // written by us, read by the kernel
	producerPos position // written by the kernel
	dataArea
	size uint64 // bytes in the data area, a power of two
}

// dataArea is what a walk needs, two words a loop keeps in registers.
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

// load load-acquires the word; near is less than 2 GiB from it.
func (p position) load(near uint64) uint64 {
	if ulong.Process32 && ulong.Is32 {
		return ulong.Widen(near, atomic.LoadUint32((*uint32)(p.word)))
	}
	return atomic.LoadUint64((*uint64)(p.word))
}

// store store-releases pos.
func (p position) store(pos uint64) {
	if ulong.Process32 && ulong.Is32 {
		atomic.StoreUint32((*uint32)(p.word), uint32(pos))
		return
	}
	atomic.StoreUint64((*uint64)(p.word), pos)
}

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

// loadProducer loads the producer position, so that every header below
// it is visible, and checks it: not below near, the reader's consumer
// position, and within a ring of the kernel's (another reader of the map
// may have moved that one on).
func (rg *ring) loadProducer(near uint64) (uint64, error) {
	producer := rg.producerPos.load(near)
	consumer := rg.consumerPos.load(near)
	if int64(producer-near) < 0 || int64(producer-consumer) > int64(rg.size) || producer%recordAlign != 0 {
		return 0, fmt.Errorf("%w: producer position %d, consumer position %d, ring of %d bytes",
			ErrCorrupt, producer, consumer, rg.size)
	}
	return producer, nil
}

// loadConsumer loads the consumer position the kernel holds (below 4 GiB
// on a 32-bit kernel: the reader's positions start there).
func (rg *ring) loadConsumer() uint64 {
	return rg.consumerPos.load(0)
}

// startPos is loadConsumer for a reader that starts there: a record's
// start, or ErrCorrupt.
func (rg *ring) startPos() (uint64, error) {
	pos := rg.loadConsumer()
	if pos%recordAlign != 0 {
		return 0, fmt.Errorf("%w: consumer position %d is not 8-byte aligned", ErrCorrupt, pos)
	}
	return pos, nil
}

// publishConsumer stores pos as the consumer position, unless the kernel
// holds a later one (another reader of the map consumed further).
func (rg *ring) publishConsumer(pos uint64) {
	if int64(pos-rg.consumerPos.load(pos)) > 0 {
		rg.consumerPos.store(pos)
	}
}

// headerAt loads the header at pos, so that a committed record's payload
// is visible.
func (a dataArea) headerAt(pos uint64) header {
	return header(atomic.LoadUint32((*uint32)(unsafe.Add(a.data, pos&a.mask))))
}

// corrupt is the error for a record at pos that ends past end.
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
