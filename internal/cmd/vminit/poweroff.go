//go:build linux

package main

import (
	"os"
	"syscall"
	"time"
)

// powerOff ends the VM with code as QEMU's exit status (see package wire)
// and never returns. If the debug-exit port cannot be used (a QEMU started
// without the device), it falls back to an ACPI power-off, which QEMU
// reports as status 0: the host then relies on the console markers.
func powerOff(con *os.File, code byte) {
	drain(con)
	if err := writeDebugExit(code); err == nil {
		// QEMU exits during the port write; give it a moment.
		time.Sleep(time.Second)
	}
	syscall.Sync()
	syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
	// PID 1 must never exit: that would panic the kernel and blur a clean
	// result into a crash.
	for {
		time.Sleep(time.Hour)
	}
}
