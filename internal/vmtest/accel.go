package vmtest

import (
	"fmt"
	"os"
)

// Accelerator choices for the -accel flag and ACCEL=.
const (
	// AccelAuto tries KVM on the real kernels of the matrix and moves the
	// run to TCG at the first kernel that fails under it.
	AccelAuto = "auto"
	// AccelKVM is hardware virtualisation through /dev/kvm.
	AccelKVM = "kvm"
	// AccelTCG is QEMU's emulator: slower, but it runs anywhere.
	AccelTCG = "tcg"
)

// accelPolicy settles each kernel's accelerator as a matrix run goes on.
//
// A /dev/kvm that opens, or even runs a firmware stub, says little: on
// some hosts every real Debian kernel stops early in boot under KVM
// (QEMU reports a KVM internal error and pauses the guest), or QEMU
// aborts setting up the vCPU. So with AccelAuto the kernels of the
// matrix are the probe: each runs under KVM until one fails in a way
// that blames KVM (see kvmFailure); that kernel runs again under TCG, and
// so does the rest of the run.
type accelPolicy struct {
	// current is the accelerator for the next kernel, why the reason.
	current, why string
	// trial says KVM is in use under AccelAuto and may still fail over.
	trial bool
}

// openKVM checks that /dev/kvm can be opened for use.
func openKVM() error {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// newAccelPolicy starts a policy for the -accel value want; kvmDevice
// checks /dev/kvm (openKVM outside tests).
func newAccelPolicy(want string, kvmDevice func() error) (*accelPolicy, error) {
	switch want {
	case AccelTCG, AccelKVM:
		return &accelPolicy{current: want, why: "asked for with -accel " + want}, nil
	case AccelAuto, "":
	default:
		return nil, fmt.Errorf("unknown accelerator %q: want %s, %s or %s", want, AccelAuto, AccelKVM, AccelTCG)
	}
	if err := kvmDevice(); err != nil {
		return &accelPolicy{current: AccelTCG, why: "no usable /dev/kvm: " + err.Error()}, nil
	}
	return &accelPolicy{current: AccelKVM, why: "/dev/kvm opens; this kernel is KVM's trial", trial: true}, nil
}

// next is the accelerator for the next kernel and why.
func (p *accelPolicy) next() (accel, why string) { return p.current, p.why }

// booted records that kernel booted under the current accelerator.
func (p *accelPolicy) booted(kernel string) {
	if p.trial {
		p.why = "KVM ran kernel " + kernel + " earlier in this run"
	}
}

// kvmFailed records that kernel failed under KVM for the reason what,
// and says whether to run it again under TCG: only under AccelAuto, and
// from then on the whole run uses TCG.
func (p *accelPolicy) kvmFailed(kernel, what string) bool {
	if !p.trial {
		return false
	}
	p.current, p.trial = AccelTCG, false
	p.why = fmt.Sprintf("KVM failed on kernel %s earlier in this run (%s)", kernel, what)
	return true
}

// kvmFailure says why a run under KVM failed in a way that blames the
// accelerator rather than the kernel or the tests, or returns "": QEMU
// reported a KVM internal error, the guest fell silent past the
// watchdog or did not boot by its deadline, or, before the guest's first
// marker, QEMU died or the host timeout struck. A panic, an init error or failing tests are the
// kernel's own results and are reported as such.
func kvmFailure(b Boot, c *Console) string {
	switch {
	case b.KVMError != "":
		return b.KVMError
	case b.Silent:
		return fmt.Sprintf("guest silent for %s", b.Watchdog)
	case b.NoBoot:
		return fmt.Sprintf("the init did not start within %s", b.BootDeadline)
	case c.Booted:
		return ""
	case b.TimedOut:
		return "no boot within the host timeout"
	case b.StartErr == nil && !b.Interrupted && (b.Signal != "" || b.Status == 1):
		d := fmt.Sprintf("QEMU exited with status %d before the guest booted", b.Status)
		if b.Signal != "" {
			d = "QEMU " + b.Signal + " before the guest booted"
		}
		return d
	}
	return ""
}

// cpuModel is the -cpu value for an accelerator: the host's CPU under
// KVM, and under TCG every feature it emulates, RDRAND included.
func cpuModel(accel string) string {
	if accel == AccelKVM {
		return "host"
	}
	return "max"
}
