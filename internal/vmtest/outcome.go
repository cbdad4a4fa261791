package vmtest

import (
	"fmt"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// Outcome is how a VM run ended, from the host's point of view.
type Outcome string

// The outcomes. A panic, a hang and a failing test are deliberately
// different values: each needs a different kind of look.
const (
	// OutcomePass: every step exited 0 and the console agrees.
	OutcomePass Outcome = "ok"
	// OutcomeTestsFailed: the guest ran every step it could and at least
	// one exited non-zero.
	OutcomeTestsFailed Outcome = "tests failed"
	// OutcomePanic: the guest kernel panicked, or the guest reset without
	// reporting.
	OutcomePanic Outcome = "guest panic"
	// OutcomeHang: the host timeout or the watchdog ended the VM.
	OutcomeHang Outcome = "hang"
	// OutcomeKVMError: QEMU reported a KVM internal error and the VM was
	// stopped; the accelerator, not the kernel, is at fault.
	OutcomeKVMError Outcome = "kvm error"
	// OutcomeInitError: the guest init reported it could not run the plan.
	OutcomeInitError Outcome = "init error"
	// OutcomeQEMUError: QEMU failed to start or died by itself.
	OutcomeQEMUError Outcome = "qemu error"
	// OutcomeLostOutput: the exit code and the console disagree, so some
	// console output went missing; results cannot be trusted.
	OutcomeLostOutput Outcome = "lost output"
	// OutcomeInterrupted: the run was cancelled on the host.
	OutcomeInterrupted Outcome = "interrupted"
	// OutcomeNotRun: the VM never started (the kernel could not be
	// fetched, or nothing could be built).
	OutcomeNotRun Outcome = "not run"
)

// Verdict is an outcome with a one-line explanation.
type Verdict struct {
	Outcome Outcome
	// Detail says which steps failed, the panic line, and the like.
	Detail string
}

// OK says the verdict is a pass.
func (v Verdict) OK() bool { return v.Outcome == OutcomePass }

// String renders the verdict as "outcome: detail".
func (v Verdict) String() string {
	if v.Detail == "" {
		return string(v.Outcome)
	}
	return string(v.Outcome) + ": " + v.Detail
}

// Decide reads QEMU's exit status, cross-checked with the console markers
// against the planned steps.
//
// QEMU's status means: (v<<1)|1 after the guest wrote v to the
// debug-exit port (wire.QEMUStatus); 0 after the guest shut down or
// reset, which with panic=-1 and -no-reboot is a kernel panic; 1 when
// QEMU itself failed ("qemu-system-x86_64: ..." on stderr).
func Decide(b Boot, c *Console, steps []wire.Step, qemuStderr string) Verdict {
	switch {
	case b.StartErr != nil:
		return Verdict{OutcomeQEMUError, "cannot start QEMU: " + b.StartErr.Error()}
	case b.Interrupted:
		return Verdict{OutcomeInterrupted, ""}
	case b.KVMError != "":
		return Verdict{OutcomeKVMError, b.KVMError + where(c)}
	case b.Silent:
		return Verdict{OutcomeHang, fmt.Sprintf("no console output or heartbeat for %s, stopped by the watchdog", b.Watchdog) + where(c)}
	case b.NoBoot:
		return Verdict{OutcomeHang, fmt.Sprintf("the init did not start within %s, stopped", b.BootDeadline)}
	case b.TimedOut:
		return Verdict{OutcomeHang, "no exit within the host timeout" + where(c)}
	}
	switch b.Status {
	case wire.QEMUStatus(wire.ExitPass):
		if missing := unconfirmed(c, steps); len(missing) > 0 || !c.Done {
			return Verdict{OutcomeLostOutput, "guest reported a pass but the console lacks results for: " + orNone(missing)}
		}
		return Verdict{OutcomePass, ""}
	case wire.QEMUStatus(wire.ExitFail):
		failed := failedSteps(c, steps)
		if len(failed) == 0 {
			return Verdict{OutcomeLostOutput, "guest reported a failure but every step on the console passed"}
		}
		return Verdict{OutcomeTestsFailed, strings.Join(failed, ", ")}
	case wire.QEMUStatus(wire.ExitInitError):
		return Verdict{OutcomeInitError, orNone(c.Errors)}
	case 0:
		if c.Panic == "" && c.Done {
			// The init could not use the debug-exit port and powered off
			// instead; its markers are all there is to go by.
			if failed := failedSteps(c, steps); len(failed) > 0 {
				return Verdict{OutcomeTestsFailed, strings.Join(failed, ", ") + " (no debug-exit code; judged by the console)"}
			}
			return Verdict{OutcomePass, "no debug-exit code; judged by the console"}
		}
		if c.Panic != "" {
			return Verdict{OutcomePanic, c.Panic}
		}
		return Verdict{OutcomePanic, "guest reset or powered off without reporting; last line: " + c.Last}
	}
	d := fmt.Sprintf("QEMU exited with status %d", b.Status)
	if b.Signal != "" {
		d = "QEMU " + b.Signal
	}
	if msg := lastLine(qemuStderr); msg != "" {
		d += ": " + msg
	}
	return Verdict{OutcomeQEMUError, d}
}

// where says how far the guest got, for a VM stopped from the host.
func where(c *Console) string {
	d := ""
	if s := lastBegun(c); s != nil {
		d = fmt.Sprintf(", in %s %s", s.Package, s.Phase)
	} else if !c.Booted {
		d = ", before the init started"
	}
	if c.Panic != "" {
		d += ", after: " + c.Panic
	}
	return d
}

// unconfirmed lists planned steps without a RESULT marker saying exit 0.
func unconfirmed(c *Console, steps []wire.Step) []string {
	var out []string
	for _, st := range steps {
		if !c.Step(st.Package, st.Phase).OK() {
			out = append(out, stepName(st))
		}
	}
	return out
}

// failedSteps describes the planned steps that did not pass.
func failedSteps(c *Console, steps []wire.Step) []string {
	var out []string
	for _, st := range steps {
		s := c.Step(st.Package, st.Phase)
		switch {
		case s == nil || !s.Ended:
			out = append(out, stepName(st)+" (no result)")
		case s.Why != "":
			out = append(out, fmt.Sprintf("%s (%s)", stepName(st), s.Why))
		case s.Exit != 0:
			out = append(out, fmt.Sprintf("%s (exit %d)", stepName(st), s.Exit))
		}
	}
	return out
}

func stepName(st wire.Step) string { return st.Package + " " + string(st.Phase) }

func lastBegun(c *Console) *StepResult {
	if n := len(c.Steps); n > 0 && !c.Steps[n-1].Ended {
		return c.Steps[n-1]
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, "; ")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
