package ringbuf

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/ulong"
)

// Kernel ABI of BPF_MAP_TYPE_RINGBUF (kernel/bpf/ringbuf.c and
// include/uapi/linux/bpf.h, unchanged since 5.8):
//   - the map fd is mmap'd as: page 0, the consumer position (read-write);
//     page 1, the producer position (read-only); from page 2 on, the data
//     area, mapped twice back to back, so a record that wraps around the end
//     is contiguous in memory;
//   - both positions are unsigned longs that only grow: 64 bits on a 64-bit
//     kernel, 32 on a 32-bit one, where they wrap at 2^32 (the position
//     type below converts); a position's offset in the data area is
//     pos & (size-1), size being a power of two;
//   - every record starts with an 8-byte header {u32 len; u32 pg_off}, where
//     len carries BPF_RINGBUF_BUSY_BIT while the producer writes and
//     BPF_RINGBUF_DISCARD_BIT if it was discarded; a record occupies
//     round_up(len + 8, 8) bytes;
//   - the producer publishes producer_pos (store-release) only after writing
//     the busy header, and clears the busy bit (xchg) on submit or discard;
//   - on submit the kernel wakes the map's pollers only if the consumer
//     position it reads equals the record's position (or the producer asked
//     for BPF_RB_FORCE_WAKEUP): a reader must publish before it sleeps.
const (
	headerSize  = 8
	busyBit     = 1 << 31
	discardBit  = 1 << 30
	lengthMask  = discardBit - 1
	recordAlign = 8
)

// header is a record's first word, as the producer left it.
type header uint32

func (h header) busy() bool      { return h&busyBit != 0 }
func (h header) discarded() bool { return h&discardBit != 0 }
func (h header) length() uint32  { return uint32(h) & lengthMask }

// total is the space the record occupies, header and padding included.
func (h header) total() uint64 {
	return (uint64(h.length()) + headerSize + recordAlign - 1) &^ (recordAlign - 1)
}

// ring is a view of a ring buffer's memory. It knows the layout and checks
// what it reads, but not how the memory was mapped: the reader maps a
// kernel map, the tests map a memfd.
type ring struct {
	consumerPos position // written by us, read by the kernel
	producerPos position // written by the kernel
	dataArea
	size uint64 // bytes in the data area, a power of two
}

// dataArea is what a walk over the records needs: two words, so that a
// loop that copies it keeps them in registers (Batch.Samples).
type dataArea struct {
	data unsafe.Pointer
	mask uint64 // size-1
}

// position is one of the kernel's position words. The reader counts in
// 64-bit positions; on a 32-bit kernel (ulong.Is32), load widens the
// word to the position nearest a known one and store keeps the low 32
// bits.
type position struct {
	word unsafe.Pointer
}

// load reads the word with acquire semantics; near is a position less
// than 2 GiB from the one stored.
func (p position) load(near uint64) uint64 {
	if ulong.Process32 {
		if ulong.Is32 {
			return ulong.Widen(near, atomic.LoadUint32((*uint32)(p.word)))
		}
	}
	return atomic.LoadUint64((*uint64)(p.word))
}

// store writes pos with release semantics.
func (p position) store(pos uint64) {
	if ulong.Process32 {
		if ulong.Is32 {
			atomic.StoreUint32((*uint32)(p.word), uint32(pos))
			return
		}
	}
	atomic.StoreUint64((*uint64)(p.word), pos)
}

// newRing returns the ring whose position words are at consumerPos and
// producerPos, each the kernel's unsigned long (a uint64 on a 64-bit kernel).
func newRing(consumerPos, producerPos *uint64, data unsafe.Pointer, size uint64) (*ring, error) {
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
// every header below it is visible, and checks it against the consumer's.
func (rg *ring) loadProducer(consumer uint64) (uint64, error) {
	producer := rg.producerPos.load(consumer)
	if producer-consumer > rg.size || producer%recordAlign != 0 {
		return 0, fmt.Errorf("%w: producer position %d, consumer position %d, ring of %d bytes",
			ErrCorrupt, producer, consumer, rg.size)
	}
	return producer, nil
}

// loadConsumer reads the consumer position the kernel holds for this ring.
// On a 32-bit kernel it is below 4 GiB: the reader's positions start there.
func (rg *ring) loadConsumer() uint64 {
	return rg.consumerPos.load(0)
}

// publishConsumer stores pos as the kernel's consumer position (release
// semantics: the kernel may reuse the space below it from now on), unless
// the kernel already holds a later one: another reader of the map
// consumed further, and going back would hand its records out again.
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
// mapping. Its capacity equals its length, so an append copies instead of
// writing into read-only memory. The double mapping makes it contiguous
// even when it wraps.
func (a dataArea) sample(pos uint64, length uint32) []byte {
	p := unsafe.Add(a.data, pos&a.mask+headerSize)
	return unsafe.Slice((*byte)(p), length)
}

// mapped returns the data area, mapped twice, as the views of its records
// lie in it.
func (rg *ring) mapped() []byte {
	return unsafe.Slice((*byte)(rg.data), 2*rg.size)
}
