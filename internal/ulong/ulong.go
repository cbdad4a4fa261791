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
	"bytes"
	"errors"
	"fmt"
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

// ErrWordSize is what [Err] wraps when the kernel said nothing that tells
// whether its unsigned long is 32 or 64 bits: then Is32 is a guess, and a
// wrong one misreads every position past 4 GiB of traffic.
var ErrWordSize = errors.New("cannot tell whether the kernel's unsigned long is 32 or 64 bits")

// The personality that setarch i686 and linux32 set, PER_LINUX32, is a
// value of the low byte, PER_MASK (include/uapi/linux/personality.h);
// the bytes above it are flags (ADDR_LIMIT_3GB, ADDR_NO_RANDOMIZE, ...).
const (
	perLinux32 = 0x0008
	perMask    = 0x00ff
)

// unameTells reports whether uname names the kernel's own machine to a
// process of personality persona. Under PER_LINUX32 a kernel that has a
// 32-bit machine to emulate names that one instead: i686 on x86_64
// (override_architecture in kernel/sys.c, COMPAT_UTS_MACHINE in
// arch/x86/include/asm/compat.h), so a 32-bit name says nothing there.
func unameTells(persona uint32) bool {
	return persona&perMask != perLinux32
}

// kallsymsWord returns the size in bytes of the kernel's pointers, and so
// of its unsigned long, from the start of /proc/kallsyms, or 0 if that
// does not tell. The file opens with an address printed by %px (s_show,
// kernel/kallsyms.c), which vsprintf zero-pads to 2*sizeof(void *) hex
// digits (pointer_string, lib/vsprintf.c): the kernel's pointer, whatever
// the reader's personality or word, and zeros of the same width where
// kptr_restrict hides the address. Older kernels printed the same width
// with %pK, and before that with "%0*lx" of 2*sizeof(void *).
func kallsymsWord(start []byte) int {
	field, _, ok := bytes.Cut(start, []byte(" "))
	if !ok || (len(field) != 8 && len(field) != 16) {
		return 0
	}
	for _, c := range field {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0
		}
	}
	return len(field) / 2
}

// kernelIs32 tells from what the kernel says whether its unsigned long is
// 32 bits: the start of /proc/kallsyms (empty if it could not be read),
// then uname's machine (empty if unknown) where persona lets it tell. A
// 64-bit name is the truth in any personality.
func kernelIs32(kallsyms []byte, persona uint32, machine string) (bool, error) {
	switch word := kallsymsWord(kallsyms); {
	case word != 0:
		return word == 4, nil
	case machine == "":
	case MachineIs64(machine):
		return false, nil
	case unameTells(persona):
		return true, nil
	}
	return false, fmt.Errorf("%w: /proc/kallsyms starts %q, uname says %q under personality %#x", ErrWordSize, kallsyms, machine, persona)
}
