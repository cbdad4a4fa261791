package vmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// Accelerator choices for the -accel flag and ACCEL=.
const (
	// AccelAuto uses KVM when a probe guest runs under it, else TCG.
	AccelAuto = "auto"
	// AccelKVM is hardware virtualisation through /dev/kvm.
	AccelKVM = "kvm"
	// AccelTCG is QEMU's emulator: slower, but it runs anywhere.
	AccelTCG = "tcg"
)

// ProbeFirmware is a 64 KiB BIOS image whose only code, at the x86 reset
// vector (F000:FFF0, the last 16 bytes of the image), writes
// wire.ExitPass to the debug-exit port and halts. Booting it tells in a
// fraction of a second whether an accelerator can run a guest at all.
func ProbeFirmware() []byte {
	img := bytes.Repeat([]byte{0xf4}, 64<<10) // hlt everywhere else
	code := []byte{
		0xb0, wire.ExitPass, // mov al, ExitPass
		0xe6, wire.DebugExitPort, // out DebugExitPort, al
		0xf4,       // hlt
		0xeb, 0xfd, // jmp back to hlt
	}
	copy(img[0xfff0:], code)
	return img
}

// ChooseAccel settles the accelerator. "tcg" and "kvm" are taken as
// given; "auto" uses KVM only when /dev/kvm opens and a probe guest runs
// under it with the same CPU model a real run uses (-cpu host). Some
// virtual machines offer a /dev/kvm that fails that (QEMU aborts setting
// an MSR, or the guest hangs), and TCG is used there. The reason says why.
func ChooseAccel(ctx context.Context, qemu, want, tmpDir string) (accel, reason string) {
	switch want {
	case AccelTCG, AccelKVM:
		return want, "asked for"
	case AccelAuto, "":
	default:
		return AccelTCG, fmt.Sprintf("unknown accelerator %q, using tcg", want)
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return AccelTCG, "no usable /dev/kvm: " + err.Error()
	}
	f.Close()
	if err := probe(ctx, qemu, AccelKVM, tmpDir); err != nil {
		return AccelTCG, "/dev/kvm is there but a KVM guest does not run: " + err.Error()
	}
	return AccelKVM, "/dev/kvm runs a probe guest"
}

// probe boots ProbeFirmware under accel, with the CPU model a real run
// would use, and checks that it reports through the debug-exit port.
func probe(ctx context.Context, qemu, accel, tmpDir string) error {
	fw := filepath.Join(tmpDir, "kvm-probe.bin")
	if err := os.WriteFile(fw, ProbeFirmware(), 0o644); err != nil {
		return err
	}
	// A working accelerator runs the probe in well under a second.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu,
		"-accel", accel, "-cpu", cpuModel(accel), "-machine", "pc", "-smp", "1", "-m", "16M",
		"-nodefaults", "-display", "none", "-no-reboot", "-bios", fw,
		"-device", fmt.Sprintf("isa-debug-exit,iobase=%#x,iosize=0x04", wire.DebugExitPort))
	// QEMU aborts on a broken KVM; any core file lands in the scratch folder.
	cmd.Dir = tmpDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("probe guest hung")
	}
	if got, want := cmd.ProcessState.ExitCode(), wire.QEMUStatus(wire.ExitPass); got != want {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "error:"); i >= 0 {
			msg = msg[i:]
		}
		msg, _, _ = strings.Cut(msg, "\n")
		return fmt.Errorf("probe ended with %s, want exit status %d: %s", cmd.ProcessState, want, msg)
	}
	return nil
}

// cpuModel is the -cpu value for an accelerator: the host's CPU under
// KVM, and under TCG every feature it emulates, RDRAND included.
func cpuModel(accel string) string {
	if accel == AccelKVM {
		return "host"
	}
	return "max"
}
