//go:build linux

package main

import (
	"syscall"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// outb writes val to an x86 I/O port. It is in port_amd64.s: Go has no
// intrinsic for the OUT instruction, and Debian's kernels are built
// without /dev/port (CONFIG_DEVPORT is not set), which would have been the
// other way.
func outb(port uint16, val uint8)

// writeDebugExit asks for the I/O permission on the debug-exit port and
// writes code to it. The caller must hold its OS thread (ioperm(2) grants
// the permission to the calling thread only).
func writeDebugExit(code byte) error {
	if err := syscall.Ioperm(wire.DebugExitPort, 4, 1); err != nil {
		return err
	}
	outb(wire.DebugExitPort, code)
	return nil
}
