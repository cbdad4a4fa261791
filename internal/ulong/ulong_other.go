//go:build !linux

package ulong

// Is32 reports whether the kernel's unsigned long is 32 bits wide; outside
// Linux no reader maps a kernel ring, so it is false.
const Is32 = false

// Err returns nil: outside Linux there is no kernel word to tell.
func Err() error { return nil }
