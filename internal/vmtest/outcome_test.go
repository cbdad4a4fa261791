package vmtest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// steps is a plan of one package's tests and benchmarks.
var steps = []wire.Step{
	{Package: "p", Phase: wire.PhaseTest},
	{Package: "p", Phase: wire.PhaseBench},
}

const (
	allPassed = `VMTEST-BOOTED kernel=k release=r
VMTEST-BEGIN pkg=p phase=test
VMTEST-RESULT pkg=p phase=test exit=0
VMTEST-BEGIN pkg=p phase=bench
VMTEST-RESULT pkg=p phase=bench exit=0
VMTEST-DONE status=pass`
	testFailed = `VMTEST-BOOTED kernel=k release=r
VMTEST-BEGIN pkg=p phase=test
--- FAIL: TestX (0.00s)
VMTEST-RESULT pkg=p phase=test exit=1
VMTEST-BEGIN pkg=p phase=bench
VMTEST-RESULT pkg=p phase=bench exit=0
VMTEST-DONE status=fail`
	benchTimedOut = `VMTEST-BOOTED kernel=k release=r
VMTEST-BEGIN pkg=p phase=test
VMTEST-RESULT pkg=p phase=test exit=0
VMTEST-BEGIN pkg=p phase=bench
VMTEST-RESULT pkg=p phase=bench exit=-1 why=timeout
VMTEST-DONE status=fail`
	panicked = `VMTEST-BOOTED kernel=k release=r
VMTEST-BEGIN pkg=p phase=test
[    2.0] Kernel panic - not syncing: Fatal exception
[    2.0] Kernel Offset: disabled`
	stuck = `VMTEST-BOOTED kernel=k release=r
VMTEST-BEGIN pkg=p phase=test
=== RUN   TestSlow`
	// The last markers were lost at power-off.
	truncated = `VMTEST-BOOTED kernel=k release=r
VMTEST-BEGIN pkg=p phase=test
VMTEST-RESULT pkg=p phase=test exit=0
VMTEST-BEGIN pkg=p phase=bench`
	initFailed = `VMTEST-ERROR msg="mount bpf on /sys/fs/bpf: no such device"`
)

func decide(t *testing.T, b Boot, console string, stderr string) Verdict {
	t.Helper()
	return Decide(b, ParseConsole(consoleLines(t, "\n"+console)), steps, stderr)
}

func TestDecide(t *testing.T) {
	status := func(v byte) Boot { return Boot{Status: wire.QEMUStatus(v)} }
	for _, tt := range []struct {
		name    string
		boot    Boot
		console string
		stderr  string
		want    Outcome
		detail  string // a part of the detail
	}{
		{"pass", status(wire.ExitPass), allPassed, "", OutcomePass, ""},
		{"failing test", status(wire.ExitFail), testFailed, "", OutcomeTestsFailed, "p test (exit 1)"},
		{"benchmark timeout in guest", status(wire.ExitFail), benchTimedOut, "", OutcomeTestsFailed, "p bench (timeout)"},
		{"panic", Boot{Status: 0}, panicked, "", OutcomePanic, "Kernel panic - not syncing: Fatal exception"},
		{"reset without panic line", Boot{Status: 0}, stuck, "", OutcomePanic, "without reporting; last line: === RUN   TestSlow"},
		{"hang", Boot{Status: -1, Signal: "signal: killed", TimedOut: true}, stuck, "", OutcomeHang, "in p test"},
		{"hang before init", Boot{Status: -1, TimedOut: true}, "[ 0.0] Linux version", "", OutcomeHang, "before the init started"},
		{"hang after a panic", Boot{Status: -1, TimedOut: true}, panicked, "", OutcomeHang, "after: Kernel panic"},
		{"KVM internal error", Boot{Status: -1, Signal: "signal: killed", KVMError: "KVM internal error. Suberror: 1 (emulation failure)"},
			"[ 0.0] Linux version", "", OutcomeKVMError, "Suberror: 1 (emulation failure), before the init started"},
		{"silent past the watchdog", Boot{Status: -1, Signal: "signal: killed", Silent: true, Watchdog: 30 * time.Second}, stuck, "",
			OutcomeHang, "no console output or heartbeat for 30s, stopped by the watchdog, in p test"},
		{"not booted by the deadline", Boot{Status: -1, NoBoot: true, BootDeadline: 30 * time.Second}, "[ 0.0] Linux version", "",
			OutcomeHang, "the init did not start within 30s"},
		{"init error", status(wire.ExitInitError), initFailed, "", OutcomeInitError, "mount bpf"},
		{"pass code, lost markers", status(wire.ExitPass), truncated, "", OutcomeLostOutput, "p bench"},
		{"fail code, all markers pass", status(wire.ExitFail), allPassed, "", OutcomeLostOutput, "every step on the console passed"},
		{"no debug-exit, markers pass", Boot{Status: 0}, allPassed, "", OutcomePass, "judged by the console"},
		{"no debug-exit, markers fail", Boot{Status: 0}, testFailed, "", OutcomeTestsFailed, "judged by the console"},
		{"qemu cannot start", Boot{Status: -1, StartErr: errors.New("exec: not found")}, "", "", OutcomeQEMUError, "exec: not found"},
		{"qemu error", Boot{Status: 1}, "", "qemu-system-x86_64: -kernel x: No such file\n", OutcomeQEMUError, "No such file"},
		{"qemu aborted", Boot{Status: -1, Signal: "signal: aborted"}, "", "error: failed to set MSR 0x10a to 0x69\nAssertion failed", OutcomeQEMUError, "signal: aborted"},
		{"unknown debug-exit value", Boot{Status: wire.QEMUStatus(0x7f)}, allPassed, "", OutcomeQEMUError, "status 255"},
		{"interrupted", Boot{Status: -1, Interrupted: true, TimedOut: false}, stuck, "", OutcomeInterrupted, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := decide(t, tt.boot, tt.console, tt.stderr)
			if v.Outcome != tt.want || !strings.Contains(v.Detail, tt.detail) {
				t.Errorf("Decide = %q, want %q with detail containing %q", v, tt.want, tt.detail)
			}
			if v.OK() != (tt.want == OutcomePass) {
				t.Errorf("OK() = %v for %s", v.OK(), v.Outcome)
			}
		})
	}
}

// A panic, a hang and a failing test must never be reported alike.
func TestDecideKeepsFailuresApart(t *testing.T) {
	got := map[Outcome]string{}
	for name, v := range map[string]Verdict{
		"panic":   decide(t, Boot{Status: 0, Elapsed: time.Second}, panicked, ""),
		"hang":    decide(t, Boot{Status: -1, TimedOut: true}, stuck, ""),
		"failure": decide(t, Boot{Status: wire.QEMUStatus(wire.ExitFail)}, testFailed, ""),
	} {
		if other, dup := got[v.Outcome]; dup {
			t.Errorf("%s and %s both give %q", name, other, v.Outcome)
		}
		got[v.Outcome] = name
	}
}
