package readers

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// ringMemory is every range the readers of this process mapped, now or
// before. Ranges are only added: one that Go reuses later just makes a copy
// allocate.
var ringMemory struct {
	mu    sync.Mutex // serializes additions
	spans atomic.Pointer[[]span]
}

type span struct{ start, end uintptr }

// AddRingMemory records area, a buffer's mapping, where copies never go.
// Spans it touches merge with it: one per place, not per reader.
func AddRingMemory(area []byte) {
	if len(area) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(area)))
	s := span{start, start + uintptr(len(area))}
	ringMemory.mu.Lock()
	defer ringMemory.mu.Unlock()
	var spans []span
	if old := ringMemory.spans.Load(); old != nil {
		for _, o := range *old {
			if o.start <= s.end && s.start <= o.end {
				s = span{min(s.start, o.start), max(s.end, o.end)}
			} else {
				spans = append(spans, o)
			}
		}
	}
	spans = append(spans, s)
	ringMemory.spans.Store(&spans)
}

func inRingMemory(b []byte) bool {
	spans := ringMemory.spans.Load()
	if cap(b) == 0 || spans == nil {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(cap(b))
	for _, s := range *spans {
		if start < s.end && s.start < end {
			return true
		}
	}
	return false
}

// CopyCache remembers the buffer a ReadInto last allocated, so that it is
// not searched for when reused (BenchmarkRead, mode copy): the Go heap is
// not unmapped while last points into it, where a caller's memory may be
// unmapped and come back as a ring.
type CopyCache struct {
	last *byte
}

// Destination returns dst[:n], or new memory if dst is short or a view of
// ring memory, without the search for what it last returned; its callers
// serialize it.
func (c *CopyCache) Destination(dst []byte, n int) []byte {
	if n <= cap(dst) && unsafe.SliceData(dst) == c.last {
		return dst[:n]
	}
	return c.checkedDestination(dst, n)
}

// checkedDestination is apart, so that Destination inlines.
//
//go:noinline
func (c *CopyCache) checkedDestination(dst []byte, n int) []byte {
	if n <= cap(dst) && !inRingMemory(dst) {
		return dst[:n] // the caller's: searched every time
	}
	dst = make([]byte, n)
	c.last = unsafe.SliceData(dst)
	return dst
}
