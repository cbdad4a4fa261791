//go:build 386 || amd64 || amd64p32 || arm || arm64 || loong64 || mips64le || mips64p32le || mipsle || ppc64le || riscv64 || wasm

package ringbuf

// littleEndian: a record header {u32 len; u32 pg_off} read as one word
// has len in its low half.
const littleEndian = true
