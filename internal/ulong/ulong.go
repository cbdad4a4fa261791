// Package ulong converts between the readers' 64-bit positions and the
// kernel's position words, unsigned longs, which a 32-bit kernel wraps at
// 2^32: a ring buffer's consumer_pos and producer_pos (struct bpf_ringbuf,
// kernel/bpf/ringbuf.c), and a perf buffer's __u64 data_head and data_tail
// too, as a 32-bit kernel keeps its head in a local_t (struct perf_buffer,
// kernel/events/internal.h), stores it zero-extended and reads data_tail
// into an unsigned long.
package ulong

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// Process32 holds in a 32-bit process, the only kind a 32-bit kernel runs.
// Test it first (`if ulong.Process32 && …`): a 64-bit build then compiles
// the 32-bit path away.
const Process32 = unsafe.Sizeof(uintptr(0)) == 4

// Widen returns the 64-bit position nearest near whose low 32 bits are
// word, the position a 32-bit kernel stored as word: near must be less than
// 2 GiB from it, as a reader's is.
func Widen(near uint64, word uint32) uint64 {
	return near + uint64(int64(int32(word-uint32(near))))
}

func machineIs64(machine string) bool {
	return strings.Contains(machine, "64") || machine == "s390x" || strings.HasPrefix(machine, "armv8")
}

// ErrWordSize is what [Err] wraps when nothing the kernel says tells
// whether its unsigned long is 32 or 64 bits: Is32 is then a guess, and a
// wrong one misreads positions past 4 GiB.
var ErrWordSize = errors.New("cannot tell whether the kernel's unsigned long is 32 or 64 bits")

// PER_LINUX32 (setarch i686, linux32) is a value of the low byte, PER_MASK;
// the bytes above are flags (include/uapi/linux/personality.h).
const (
	perLinux32 = 0x0008
	perMask    = 0x00ff
)

// unameTells reports whether uname names the kernel's own machine under
// personality persona: under PER_LINUX32 a 64-bit kernel names the 32-bit
// machine it emulates, i686 on x86_64 (override_architecture, kernel/sys.c;
// COMPAT_UTS_MACHINE).
func unameTells(persona uint32) bool {
	return persona&perMask != perLinux32
}

// kallsymsWord returns the size of the kernel's pointers, and so of its
// unsigned long, from the start of /proc/kallsyms, or 0 if that does not
// tell. The first address is printed zero-padded to 2*sizeof(void *) hex
// digits whatever the reader's personality, as zeros if kptr_restrict hides
// it (s_show, kernel/kallsyms.c; pointer_string, lib/vsprintf.c).
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

// kernelIs32 tells whether the kernel's unsigned long is 32 bits from the
// start of /proc/kallsyms (empty if unreadable), else from uname's machine
// (empty if unknown): a 64-bit name in any personality, a 32-bit one where
// persona lets uname tell.
func kernelIs32(kallsyms []byte, persona uint32, machine string) (bool, error) {
	switch word := kallsymsWord(kallsyms); {
	case word != 0:
		return word == 4, nil
	case machine == "":
	case machineIs64(machine):
		return false, nil
	case unameTells(persona):
		return true, nil
	}
	return false, fmt.Errorf("%w: /proc/kallsyms starts %q, uname says %q under personality %#x", ErrWordSize, kallsyms, machine, persona)
}
