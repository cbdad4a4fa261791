//go:build !linux

package ulong

// is32 is false: outside Linux no reader maps a kernel ring.
const is32 = false
