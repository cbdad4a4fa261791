package vmtest

import (
	"context"
	"fmt"
	"os"
	"sync"
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
//
// Kernels run side by side, so the policy is shared under a lock. The
// first trial run is KVM's probe: the others wait for its answer (see
// answered), so that on a host where KVM fails only one kernel finds it
// out. Every trial run that KVM fails is run again, even when another
// kernel's failure has already moved the run to TCG.
type accelPolicy struct {
	mu sync.Mutex
	// current is the accelerator for the next kernel, why the reason.
	current, why string
	// trial says KVM is in use under AccelAuto and may still fail over.
	trial bool
	// probed is closed once the first trial run has ended, at once when
	// there is no trial.
	probed chan struct{}
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
	p := &accelPolicy{probed: make(chan struct{})}
	switch want {
	case AccelTCG, AccelKVM:
		p.current, p.why = want, "asked for with -accel "+want
	case AccelAuto, "":
		if err := kvmDevice(); err != nil {
			p.current, p.why = AccelTCG, "no usable /dev/kvm: "+err.Error()
		} else {
			p.current, p.why, p.trial = AccelKVM, "/dev/kvm opens; this kernel is KVM's trial", true
		}
	default:
		return nil, fmt.Errorf("unknown accelerator %q: want %s, %s or %s", want, AccelAuto, AccelKVM, AccelTCG)
	}
	if !p.trial {
		close(p.probed)
	}
	return p, nil
}

// next is the accelerator for the next kernel and why; trial says a
// failure that blames KVM should be run again under TCG.
func (p *accelPolicy) next() (accel, why string, trial bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current, p.why, p.trial
}

// booted records that kernel booted under KVM on trial.
func (p *accelPolicy) booted(kernel string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trial {
		p.why = "KVM ran kernel " + kernel + " earlier in this run"
	}
}

// kvmFailed records that kernel failed under KVM on trial for the
// reason what: from then on the whole run uses TCG, and the first
// failure is the reason given.
func (p *accelPolicy) kvmFailed(kernel, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.trial {
		return
	}
	p.current, p.trial = AccelTCG, false
	p.why = fmt.Sprintf("KVM failed on kernel %s earlier in this run (%s)", kernel, what)
}

// answered records that a trial run has ended, whatever its outcome,
// after booted or kvmFailed had their say; kernels waiting for KVM's
// probe go on.
func (p *accelPolicy) answered() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.probed:
	default:
		close(p.probed)
	}
}

// waitProbe waits until KVM's probe has answered or ctx ends.
func (p *accelPolicy) waitProbe(ctx context.Context) {
	select {
	case <-p.probed:
	case <-ctx.Done():
	}
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

// accelOption is the -accel value for an accelerator. Under TCG one host
// thread runs all of a guest's vCPUs in turn (thread=single) instead of
// one thread each (MTTCG, QEMU's default for an x86 guest on an x86
// host), for two reasons that hold on any host:
//
//   - A VM keeps one host CPU busy whatever its -smp, which is what the
//     runner's Jobs counts: one VM per host CPU never asks for more.
//   - No vCPU runs code that another one is rewriting. The kernel patches
//     its own text (static keys, text_poke_bp) with an int3 in between;
//     under QEMU 7.2's MTTCG a 7.x guest's CPU 1 trapped on such an int3
//     in __hrtimer_start_range_ns that was no longer there (the Code:
//     line of the "Oops: int3" shows the restored instruction) and
//     panicked, in one of two matrix runs on a 2-vCPU Intel host.
//
// The guest still has its CPUs and its threads run on each, taking turns
// at QEMU's switches rather than at once.
func accelOption(accel string) string {
	if accel == AccelTCG {
		return AccelTCG + ",thread=single"
	}
	return accel
}

// cpuModel is the -cpu value for an accelerator: the host's CPU under
// KVM, and under TCG every feature it emulates, RDRAND included.
func cpuModel(accel string) string {
	if accel == AccelKVM {
		return "host"
	}
	return "max"
}
