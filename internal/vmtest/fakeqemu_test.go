package vmtest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// The tests in this file run the runner's decisions on a fake QEMU: this
// test binary, started with fakeQEMUEnv set, replays recorded QEMU
// behaviour instead of booting anything.

// fakeQEMUEnv names the behaviour the fake QEMU plays (see fakeQEMU).
const fakeQEMUEnv = "VMTEST_FAKE_QEMU"

// fakeTraceEnv names the file where fake VMs note their start and end.
const fakeTraceEnv = "VMTEST_FAKE_TRACE"

// fakePassTime is how long a passing fake guest runs: long enough for
// VMs started together to overlap on a busy host.
const fakePassTime = 700 * time.Millisecond

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeQEMUEnv); mode != "" {
		os.Exit(fakeQEMU(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeRelease is the kernel release the fake guest reports.
const fakeRelease = "5.10.0-46-cloud-amd64"

// fakePassingConsole is a guest that boots and passes the plan of
// fakePlan (one package, tests only).
var fakePassingConsole = strings.Join([]string{
	"[    0.000000] Linux version " + fakeRelease,
	"[    1.490000] Run /init as init process",
	wire.Format(wire.KindBooted, wire.FieldKernel, "5.10", wire.FieldRelease, fakeRelease),
	wire.Format(wire.KindBegin, wire.FieldPkg, "p", wire.FieldPhase, "test"),
	"=== RUN   TestA",
	"--- PASS: TestA (0.00s)",
	"PASS",
	wire.Format(wire.KindResult, wire.FieldPkg, "p", wire.FieldPhase, "test", wire.FieldExit, "0", wire.FieldSeconds, "0.1"),
	wire.Format(wire.KindDone, wire.FieldStatus, "pass"),
}, "\n") + "\n"

// fakeFailingConsole is a guest that boots and fails the plan of
// fakePlan.
var fakeFailingConsole = strings.Join([]string{
	wire.Format(wire.KindBooted, wire.FieldKernel, "5.10", wire.FieldRelease, fakeRelease),
	wire.Format(wire.KindBegin, wire.FieldPkg, "p", wire.FieldPhase, "test"),
	"=== RUN   TestA",
	"--- FAIL: TestA (0.00s)",
	"FAIL",
	wire.Format(wire.KindResult, wire.FieldPkg, "p", wire.FieldPhase, "test", wire.FieldExit, "1", wire.FieldSeconds, "0.1"),
	wire.Format(wire.KindDone, wire.FieldStatus, "fail"),
}, "\n") + "\n"

var fakePlan = &wire.Plan{Steps: []wire.Step{{Package: "p", Phase: wire.PhaseTest}}}

// fakeQEMU plays QEMU for one VM, by mode; a mode of "name=mode ..."
// words gives each kernel its own. The modes:
//
//   - pass: the guest passes after fakePassTime, under any accelerator.
//   - fail: the guest fails its test after fakePassTime.
//   - kvm-internal-error: under KVM, QEMU's recorded stderr of a KVM
//     internal error, then it waits forever with the guest paused, as
//     QEMU does; under TCG the guest passes.
//   - kvm-abort: under KVM, QEMU dies by a signal before the guest
//     prints anything (as when it fails to set an MSR); TCG passes.
//   - kvm-abort-late: kvm-abort after fakePassTime.
//   - kvm-no-boot: under KVM, the kernel prints a line every 100 ms but
//     never starts the init; TCG passes.
//   - silent: the kernel prints its first line and nothing more, under
//     any accelerator.
//   - quiet-heartbeat: the console says nothing for 5 s while the
//     heartbeat beats, then the guest passes.
//
// With fakeTraceEnv set, each VM appends "start <kernel> <accel>" to that
// file as it starts and "end <kernel> <accel>" as it ends by itself.
func fakeQEMU(mode string, args []string) int {
	accel := argAfter(args, "-accel")
	kvm := accel == AccelKVM
	kernel := fakeKernelName(args)
	if strings.Contains(mode, "=") {
		for _, w := range strings.Fields(mode) {
			if name, m, _ := strings.Cut(w, "="); name == kernel {
				mode = m
			}
		}
	}
	trace := func(event string) {
		if path := os.Getenv(fakeTraceEnv); path != "" {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				panic(err)
			}
			// One small O_APPEND write: lines of VMs side by side stay whole.
			f.WriteString(event + " " + kernel + " " + accel + "\n")
			f.Close()
		}
	}
	trace("start")
	// A guest that runs names its kernel first, so that a log filed
	// under the wrong kernel shows.
	guest := func(console string, status byte) int {
		os.Stdout.WriteString("[    0.000000] fake guest of kernel " + kernel + "\n" + console)
		trace("end")
		return wire.QEMUStatus(status)
	}
	pass := func() int { return guest(fakePassingConsole, wire.ExitPass) }
	switch mode {
	case "pass":
		time.Sleep(fakePassTime)
		return pass()
	case "fail":
		time.Sleep(fakePassTime)
		return guest(fakeFailingConsole, wire.ExitFail)
	case "kvm-internal-error":
		if !kvm {
			return pass()
		}
		b, err := os.ReadFile(os.Getenv("VMTEST_FAKE_STDERR"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Stderr.Write(b)
		hangForever() // paused guest: QEMU waits for a monitor command that never comes
	case "kvm-abort", "kvm-abort-late":
		if !kvm {
			return pass()
		}
		if mode == "kvm-abort-late" {
			time.Sleep(fakePassTime)
		}
		trace("end")
		fmt.Fprintln(os.Stderr, "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69")
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		hangForever()
	case "kvm-no-boot":
		if !kvm {
			return pass()
		}
		for i := 0; ; i++ {
			fmt.Printf("[%5d.000000] still booting\n", i)
			time.Sleep(100 * time.Millisecond)
		}
	case "silent":
		fmt.Println("[    0.000000] Linux version " + fakeRelease)
		hangForever()
	case "quiet-heartbeat":
		hb := strings.TrimPrefix(argAfter(args, "-chardev", "file,id=heartbeat,"), "file,id=heartbeat,path=")
		f, err := os.OpenFile(hb, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for range 20 {
			f.Write([]byte{'.'})
			time.Sleep(250 * time.Millisecond)
		}
		return pass()
	}
	fmt.Fprintln(os.Stderr, "fake QEMU: unknown mode", mode)
	return 1
}

// fakeKernelName is the matrix entry a VM boots, from its kernel command
// line.
func fakeKernelName(args []string) string {
	for _, p := range strings.Fields(argAfter(args, "-append")) {
		if name, ok := strings.CutPrefix(p, wire.KernelParam+"="); ok {
			return name
		}
	}
	return ""
}

// hangForever blocks like a QEMU whose guest has stopped; select {}
// would end in the runtime's deadlock panic instead.
func hangForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// argAfter returns the argument after flag, the first one that starts
// with prefix when one is given.
func argAfter(args []string, flag string, prefix ...string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag && (len(prefix) == 0 || strings.HasPrefix(args[i+1], prefix[0])) {
			return args[i+1]
		}
	}
	return ""
}

// fakeMatrix is a matrix run on the fake QEMU playing mode, with -accel
// want and a watchdog of two seconds.
func fakeMatrix(t *testing.T, mode, want string) *matrixRun {
	t.Helper()
	t.Setenv(fakeQEMUEnv, mode)
	stderr, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("VMTEST_FAKE_STDERR", stderr+"/testdata/qemu-kvm-internal-error.log")
	policy, err := newAccelPolicy(want, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return &matrixRun{
		o: Options{
			QEMU: os.Args[0], ResultsDir: t.TempDir(),
			// Short enough to keep the tests quick, long enough for a
			// fake QEMU on a busy host.
			VMTimeout: time.Minute, Watchdog: 2 * time.Second,
		},
		initrd: "/nonexistent/initramfs.cpio", plan: fakePlan, scratch: t.TempDir(),
		policy: policy, logf: t.Logf,
	}
}

var fakeKernel = &CachedKernel{Name: "5.10", Release: fakeRelease, Vmlinuz: "/nonexistent/vmlinuz"}

// readLog returns a log file of a run, failing the test when it is missing.
func readLog(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(dir + "/" + name)
	if err != nil {
		t.Fatalf("log not kept: %v", err)
	}
	return string(b)
}

// Under auto, a kernel that QEMU reports a KVM internal error for is
// stopped at once, run again under TCG, and the rest of the run uses TCG;
// the KVM attempt's QEMU output and console log are kept.
func TestKVMFailureRerunsUnderTCG(t *testing.T) {
	for _, tt := range []struct {
		mode, failure string
		outcome       Outcome
		qemuLog       string
	}{
		{"kvm-internal-error", "KVM internal error. Suberror: 1 (emulation failure)", OutcomeKVMError, "emulation failure"},
		{"kvm-abort", "QEMU signal: killed before the guest booted", OutcomeQEMUError, "failed to set MSR"},
		{"kvm-no-boot", "the init did not start within 2s", OutcomeHang, "-accel kvm"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			m := fakeMatrix(t, tt.mode, AccelAuto)
			start := time.Now()
			kr := m.runKernel(t.Context(), Kernel{Name: "5.10"}, fakeKernel)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the KVM failure cost %v; want it stopped at once", took)
			}
			if !kr.Verdict.OK() || kr.Accel != AccelTCG || !strings.Contains(kr.AccelWhy, tt.failure) {
				t.Errorf("kernel ran %q with %s (%s), want ok under tcg, run again after %q", kr.Verdict, kr.Accel, kr.AccelWhy, tt.failure)
			}
			a := kr.KVMAttempt
			if a == nil {
				t.Fatal("no KVM attempt recorded")
			}
			if a.Verdict.Outcome != tt.outcome || a.Failure != tt.failure {
				t.Errorf("KVM attempt: %q, failure %q; want %q, %q", a.Verdict, a.Failure, tt.outcome, tt.failure)
			}
			if got := readLog(t, a.LogDir, "qemu.log"); !strings.Contains(got, tt.qemuLog) || !strings.Contains(got, "-accel kvm") {
				t.Errorf("the KVM attempt's qemu.log lacks the command line or %q:\n%s", tt.qemuLog, got)
			}
			readLog(t, a.LogDir, "console.log")
			if got := readLog(t, kr.LogDir, "console.log"); !strings.Contains(got, "VMTEST-DONE status=pass") {
				t.Errorf("the TCG run's console.log:\n%s", got)
			}

			next := m.runKernel(t.Context(), Kernel{Name: "6.1"}, &CachedKernel{Name: "6.1", Release: fakeRelease, Vmlinuz: "/nonexistent"})
			if next.Accel != AccelTCG || next.KVMAttempt != nil || !strings.Contains(next.AccelWhy, "KVM failed on kernel 5.10") {
				t.Errorf("the next kernel ran with %s (%s), attempt %v; want tcg from the start", next.Accel, next.AccelWhy, next.KVMAttempt)
			}
		})
	}
}

// A forced accelerator is never swapped: -accel kvm reports the KVM
// failure as the kernel's result, in seconds.
func TestForcedKVMReportsItsFailure(t *testing.T) {
	m := fakeMatrix(t, "kvm-internal-error", AccelKVM)
	kr := m.runKernel(t.Context(), Kernel{Name: "5.10"}, fakeKernel)
	if kr.Verdict.Outcome != OutcomeKVMError || kr.Accel != AccelKVM || kr.KVMAttempt != nil {
		t.Errorf("got %q under %s (attempt %v), want a kvm error under kvm", kr.Verdict, kr.Accel, kr.KVMAttempt)
	}
	if kr.Boot.Elapsed > 10*time.Second {
		t.Errorf("took %v", kr.Boot.Elapsed)
	}
}

// A guest that stays silent is stopped at the watchdog, not the host
// timeout; its logs are kept and the summary names them. Under auto it
// is run again under TCG, where it is silent again.
func TestSilentGuestStoppedByWatchdog(t *testing.T) {
	for _, want := range []string{AccelTCG, AccelAuto} {
		t.Run(want, func(t *testing.T) {
			m := fakeMatrix(t, "silent", want)
			kr := m.runKernel(t.Context(), Kernel{Name: "5.10"}, fakeKernel)
			if !kr.Boot.Silent || kr.Verdict.Outcome != OutcomeHang || !strings.Contains(kr.Verdict.Detail, "stopped by the watchdog") {
				t.Errorf("verdict %q, silent %v; want a hang stopped by the watchdog", kr.Verdict, kr.Boot.Silent)
			}
			if kr.Boot.Elapsed > m.o.Watchdog+5*time.Second {
				t.Errorf("a silent guest cost %v with a watchdog of %v", kr.Boot.Elapsed, m.o.Watchdog)
			}
			if got := readLog(t, kr.LogDir, "console.log"); !strings.Contains(got, "Linux version") {
				t.Errorf("console.log: %q", got)
			}
			readLog(t, kr.LogDir, "qemu.log")
			if (kr.KVMAttempt != nil) != (want == AccelAuto) {
				t.Errorf("KVM attempt %+v under -accel %s", kr.KVMAttempt, want)
			}

			r := &Report{Accel: want, AccelReason: "test", Plan: fakePlan, Kernels: []KernelReport{kr},
				Builds: []PackageBuild{{Pkg: TestPackage{ImportPath: "p"}}}}
			var summary strings.Builder
			r.WriteSummary(&summary)
			for _, s := range []string{kr.LogDir + "/qemu.log (QEMU)", kr.LogDir + "/console.log (console)", "5.10: tcg, "} {
				if !strings.Contains(summary.String(), s) {
					t.Errorf("summary lacks %q:\n%s", s, summary.String())
				}
			}
		})
	}
}

// A guest whose console is quiet while its heartbeat goes on is alive:
// the watchdog leaves it be.
func TestHeartbeatKeepsQuietGuest(t *testing.T) {
	m := fakeMatrix(t, "quiet-heartbeat", AccelTCG)
	kr := m.runKernel(t.Context(), Kernel{Name: "5.10"}, fakeKernel)
	if !kr.Verdict.OK() || kr.Boot.Silent {
		t.Errorf("verdict %q, silent %v; want a pass", kr.Verdict, kr.Boot.Silent)
	}
	if kr.Boot.Elapsed < 2*m.o.Watchdog {
		t.Errorf("the guest ran %v, less than twice the watchdog: the test shows nothing", kr.Boot.Elapsed)
	}
}
