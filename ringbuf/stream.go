package ringbuf

import "unsafe"

// The records read whole (loadLines), header included, so that a reader
// of their heads alone still reads the ring as a stream: more than two
// cache lines, and up to streamMax bytes for PeekInto or walkStreamMax
// for the walks of Records and Batches, whose bodies read the lines
// themselves when they read the whole record, and pay for the loads
// from 168 bytes on (docs/batch-walk.md).
const (
	streamMin     = 2 * 64
	streamMax     = 512 + headerSize
	walkStreamMax = 2*64 + 32
)

// loadLines loads a word of each cache line after the header's of the
// record at pos, total bytes long, if streamMin < total <= max, and
// returns them ORed for the caller to keep, or they are compiled away
// (why: docs/batch-walk.md, "Measurements behind the read styles' design").
func (a dataArea) loadLines(pos, total, max uint64) (kept uint32) {
	if total > streamMin && total <= max {
		for off := uint64(64); off < total; off += 64 {
			kept |= *(*uint32)(unsafe.Add(a.data, (pos+off)&a.mask))
		}
	}
	return kept
}
