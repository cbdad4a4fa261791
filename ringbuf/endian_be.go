//go:build armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64

package ringbuf

// littleEndian: a record header {u32 len; u32 pg_off} read as one word
// has len in its high half.
const littleEndian = false
