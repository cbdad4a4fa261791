package wire

// DebugExitPort is the I/O port of QEMU's isa-debug-exit device, as the
// host configures it: -device isa-debug-exit,iobase=0xf4,iosize=0x04.
const DebugExitPort = 0xf4

// Values the guest init writes to the debug-exit port. QEMU turns a
// written value v into its own exit status (v<<1)|1 ("exit((val << 1) |
// 1)" in hw/misc/debugexit.c), so every status the guest can cause is odd
// and at least 3: it can never be mistaken for QEMU's own 0 (guest shut
// down or rebooted, which with -no-reboot and panic=-1 is what a kernel
// panic looks like) or 1 (QEMU failed).
const (
	// ExitPass: every step exited 0.
	ExitPass byte = 0x10
	// ExitFail: at least one step failed; the markers say which.
	ExitFail byte = 0x11
	// ExitInitError: the init itself could not do its job (no plan, a
	// required mount failed).
	ExitInitError byte = 0x12
)

// QEMUStatus is the exit status of the QEMU process after the guest
// wrote v to the debug-exit port.
func QEMUStatus(v byte) int { return int(v)<<1 | 1 }
