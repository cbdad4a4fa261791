//go:build !linux

package ulong

// Is32 is false outside Linux, where no reader maps a kernel ring.
const Is32 = false

// Err returns nil: outside Linux there is no kernel word to tell.
func Err() error { return nil }
