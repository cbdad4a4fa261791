//go:build !amd64

package main

import "errors"

// writeDebugExit is only implemented on amd64, the one architecture the
// runner boots (qemu-system-x86_64).
func writeDebugExit(code byte) error {
	return errors.New("isa-debug-exit is only wired up on amd64")
}
