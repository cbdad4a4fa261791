// Package ulong converts between the readers' 64-bit positions and the
// kernel's position words, which are unsigned longs: 64 bits on a 64-bit
// kernel, 32 bits on a 32-bit kernel, where they wrap at 2^32.
//
// A BPF ring buffer's consumer_pos and producer_pos are unsigned long
// (struct bpf_ringbuf, kernel/bpf/ringbuf.c). A perf buffer's data_head
// and data_tail are __u64 (struct perf_event_mmap_page,
// include/uapi/linux/perf_event.h), but a 32-bit kernel keeps its head in
// a long (struct perf_buffer's local_t head, kernel/events/internal.h)
// and stores it zero-extended, so data_head wraps at 2^32 there too, and
// reads data_tail into an unsigned long, so the upper half it ignores.
package ulong

import (
	"strings"
	"unsafe"
)

// Process32 holds in a 32-bit process, the only kind that may run on a
// 32-bit kernel (then Is32 holds too). A reader tests it first, as a
// constant, in an if of its own: Go's inliner then does not count the
// 32-bit path of a 64-bit build, and the reader's per-record publish stays
// inlined (BenchmarkRead, mode=peek: a runtime test cost 10% at 16 B).
const Process32 = unsafe.Sizeof(uintptr(0)) == 4

// Widen returns the 64-bit position nearest near whose low 32 bits are
// word: the position a 32-bit kernel stored as word, given a position
// that is less than 2 GiB from it (the reader's own, or the last one
// loaded). The readers' rings are smaller than that.
func Widen(near uint64, word uint32) uint64 {
	return near + uint64(int64(int32(word-uint32(near))))
}

// MachineIs64 reports whether uname's machine name is a 64-bit kernel's.
func MachineIs64(machine string) bool {
	return strings.Contains(machine, "64") || machine == "s390x" || strings.HasPrefix(machine, "armv8")
}
