package vmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// Options configure a matrix run.
type Options struct {
	// ModuleDir is the module root, where go list and go test run.
	ModuleDir string
	// Cache keeps the kernels.
	Cache Cache
	// ResultsDir gets one folder of logs per kernel.
	ResultsDir string
	// Kernels are booted in this order, Jobs at a time; the report keeps
	// the order.
	Kernels []Kernel
	// Jobs is how many VMs run at once; zero means one. Under TCG a VM
	// is one host thread whatever its CPUs (accelOption), so
	// runtime.NumCPU() keeps every CPU busy and no more.
	Jobs int
	// Patterns select packages for go list; empty means ./... .
	Patterns []string
	// Accel is AccelAuto, AccelKVM or AccelTCG.
	Accel string
	// VMTimeout bounds each VM from the host.
	VMTimeout time.Duration
	// Watchdog stops a VM that shows no sign of life for that long;
	// zero means DefaultWatchdog.
	Watchdog time.Duration
	// QEMU is the emulator binary; empty means QEMU.
	QEMU string
	// Plan shapes what runs inside each VM.
	Plan PlanOptions
	// Refresh re-resolves kernels that are already cached.
	Refresh bool
	// Offline never fetches: kernels that are not cached are not run.
	Offline bool
	// Log gets progress lines.
	Log io.Writer
}

// PackageBuild is one package as built for the guest.
type PackageBuild struct {
	// Pkg is the package as go list found it.
	Pkg TestPackage
	// Err and Output describe a failed build.
	Err    error
	Output string
}

// KernelReport is the result of one kernel.
type KernelReport struct {
	// Kernel is the matrix entry and Cached the image that was booted
	// (nil when there was none).
	Kernel Kernel
	Cached *CachedKernel
	// Boot is what the host saw, Console what the guest said, Verdict
	// what the two add up to.
	Boot    Boot
	Console *Console
	Verdict Verdict
	// LogDir holds console.log, qemu.log and one log per step.
	LogDir string
	// Accel is the accelerator the kernel ran with, AccelWhy why.
	Accel, AccelWhy string
	// KVMAttempt is the run under KVM that failed before this one ran
	// under TCG, nil when there was none.
	KVMAttempt *Attempt
}

// Attempt is a run of a kernel that was given up on and run again.
type Attempt struct {
	// Accel is the accelerator it ran with, Failure why it was given up.
	Accel, Failure string
	// Verdict and Elapsed are its outcome and how long it took.
	Verdict Verdict
	Elapsed time.Duration
	// LogDir keeps its console.log and qemu.log.
	LogDir string
}

// KVMAttemptDir is the folder under a kernel's logs that keeps the failed
// KVM run when the kernel was run again under TCG.
const KVMAttemptDir = "kvm-attempt"

// Report is the result of a matrix run.
type Report struct {
	// Accel is the accelerator asked for, and AccelReason what the run
	// started with and why; each KernelReport says what it ran with.
	Accel, AccelReason string
	// Builds has one entry per package with tests, built or not.
	Builds []PackageBuild
	// Plan is what every VM ran.
	Plan *wire.Plan
	// Kernels has one report per selected kernel, in matrix order.
	Kernels []KernelReport
	// Durations of the phases, for the summary.
	FetchTime, BuildTime, Total time.Duration
	// Jobs is how many VMs ran at once.
	Jobs int
}

// OK says every package built and every kernel passed.
func (r *Report) OK() bool {
	if len(r.Builds) == 0 {
		return false
	}
	for _, b := range r.Builds {
		if b.Err != nil {
			return false
		}
	}
	for _, k := range r.Kernels {
		if !k.Verdict.OK() {
			return false
		}
	}
	return len(r.Kernels) > 0
}

// Run fetches what is missing, builds, and boots every kernel, up to
// o.Jobs VMs at a time. The error is for problems that stop the whole
// run; a kernel's failure is in its KernelReport.
func Run(ctx context.Context, o Options) (*Report, error) {
	start := time.Now()
	if o.QEMU == "" {
		o.QEMU = QEMU
	}
	if o.Watchdog == 0 {
		o.Watchdog = DefaultWatchdog
	}
	o.Jobs = max(o.Jobs, 1)
	policy, err := newAccelPolicy(o.Accel, openKVM)
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{o.QEMU, "cpio", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found (Debian packages: qemu-system-x86, cpio): %w", tool, err)
		}
	}
	logf := lineLogger(o.Log)
	if err := os.MkdirAll(o.Cache.Dir, 0o755); err != nil {
		return nil, err
	}
	r := &Report{}

	cached, notRun := ensureKernels(ctx, o, logf)
	r.FetchTime = time.Since(start)

	t := time.Now()
	stage, err := os.MkdirTemp("", "vmtest-stage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	pkgs, err := ListTestPackages(ctx, o.ModuleDir, o.Patterns)
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no packages with tests match %v", o.Patterns)
	}
	if err := BuildInit(ctx, o.ModuleDir, filepath.Join(stage, "init")); err != nil {
		return nil, err
	}
	var built []TestPackage
	for _, p := range pkgs {
		out, err := StageTest(ctx, o.ModuleDir, stage, p)
		r.Builds = append(r.Builds, PackageBuild{Pkg: p, Err: err, Output: out})
		if err != nil {
			logf("build %s failed: %v\n%s", p.ImportPath, err, out)
			continue
		}
		built = append(built, p)
	}
	logf("built %d of %d test packages in %.1fs", len(built), len(pkgs), time.Since(t).Seconds())
	r.Plan = MakePlan(built, o.Plan)
	if err := os.MkdirAll(filepath.Join(stage, filepath.Dir(wire.PlanPath)), 0o755); err != nil {
		return nil, err
	}
	if err := r.Plan.WriteFile(filepath.Join(stage, wire.PlanPath)); err != nil {
		return nil, err
	}
	initrd := filepath.Join(stage + ".cpio")
	defer os.Remove(initrd)
	if err := PackInitramfs(ctx, stage, initrd); err != nil {
		return nil, err
	}
	r.BuildTime = time.Since(t)

	r.Accel = o.Accel
	if r.Accel == "" {
		r.Accel = AccelAuto
	}
	first, why, _ := policy.next()
	r.AccelReason = first + ": " + why
	logf("accelerator %s (%s), watchdog %s", first, why, o.Watchdog)
	r.Jobs = max(1, min(o.Jobs, len(cached)))
	if r.Jobs > 1 {
		logf("%d kernels, up to %d VMs at a time", len(cached), r.Jobs)
	}

	scratch, err := os.MkdirTemp("", "vmtest-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	m := &matrixRun{o: o, initrd: initrd, plan: r.Plan, scratch: scratch, policy: policy, logf: logf}
	r.Kernels = m.runKernels(ctx, cached, notRun)
	r.Total = time.Since(start)
	return r, nil
}

// lineLogger returns a printf for progress lines to w. Kernels running
// side by side log at once, so each line is written whole, in one call,
// under a lock.
func lineLogger(w io.Writer) func(string, ...any) {
	var mu sync.Mutex
	return func(format string, a ...any) {
		line := fmt.Sprintf("vmtest: "+format+"\n", a...)
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(w, line)
	}
}

// ensureKernels loads every selected kernel from the cache, fetching the
// ones that are missing (or all, with Refresh). Kernels that cannot be
// had are returned with a verdict instead.
func ensureKernels(ctx context.Context, o Options, logf func(string, ...any)) (map[string]*CachedKernel, map[string]Verdict) {
	cached := map[string]*CachedKernel{}
	notRun := map[string]Verdict{}
	var archive *Archive
	var archiveErr error
	for _, k := range o.Kernels {
		ck, err := o.Cache.Load(k.Name)
		if err == nil && !o.Refresh {
			cached[k.Name] = ck
			continue
		}
		if o.Offline {
			notRun[k.Name] = Verdict{OutcomeNotRun, "not cached, and fetching is off"}
			continue
		}
		// Found once, on the first kernel to fetch; a failure is every
		// such kernel's verdict.
		if archive == nil && archiveErr == nil {
			a, err := FindArchive(ctx, o.Cache)
			if err != nil {
				archiveErr = err
			} else {
				archive = &a
				logf("kernels from %s", a)
			}
		}
		if archiveErr != nil {
			notRun[k.Name] = Verdict{OutcomeNotRun, archiveErr.Error()}
			continue
		}
		t := time.Now()
		logf("fetching kernel %s", k.Name)
		var aptLog bytes.Buffer
		ck, err = Fetch(ctx, o.Cache, k, *archive, io.MultiWriter(&aptLog, &prefixWriter{w: o.Log}))
		if err != nil {
			notRun[k.Name] = Verdict{OutcomeNotRun, "fetch failed: " + err.Error()}
			logf("fetch %s failed: %v\n%s", k.Name, err, aptLog.String())
			continue
		}
		logf("kernel %s: %s %s (%s) fetched in %.1fs", k.Name, ck.Package, ck.Version, ck.Release, time.Since(t).Seconds())
		cached[k.Name] = ck
	}
	return cached, notRun
}

// matrixRun is what every kernel of one run shares.
type matrixRun struct {
	o       Options
	initrd  string
	plan    *wire.Plan
	scratch string // QEMU's working folder and the heartbeat files
	policy  *accelPolicy
	logf    func(string, ...any)
}

// runKernels runs o.Kernels, up to o.Jobs at a time, and returns their
// reports in the order of o.Kernels. A kernel in notRun gets its verdict
// without a VM. While KVM is on trial, the first kernel runs alone until
// its KVM run has ended, so that the rest know which accelerator to use.
// Once ctx ends no more kernels start, and those that never started are
// left out of the reports, as a one-at-a-time run stops at the
// interrupted kernel.
func (m *matrixRun) runKernels(ctx context.Context, cached map[string]*CachedKernel, notRun map[string]Verdict) []KernelReport {
	var (
		reports = make([]KernelReport, len(m.o.Kernels))
		started = make([]bool, len(m.o.Kernels))
		slots   = make(chan struct{}, max(m.o.Jobs, 1))
		wg      sync.WaitGroup
	)
	// launched says a VM has started: the ones after it wait for KVM's
	// probe, which is at once when KVM is not on trial.
	launched := false
	for i, k := range m.o.Kernels {
		// Taking the slot first makes -jobs 1 stop where a run in turn
		// did: right after the kernel that was interrupted.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if launched {
			m.policy.waitProbe(ctx)
		}
		if ctx.Err() != nil {
			break
		}
		started[i] = true
		if v, ok := notRun[k.Name]; ok {
			reports[i] = KernelReport{Kernel: k, Console: &Console{}, Verdict: v}
			<-slots
			continue
		}
		launched = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			// A probe that ended without a word (its logs could not be
			// cleared) must not hold the others back.
			defer m.policy.answered()
			reports[i] = m.runKernel(ctx, k, cached[k.Name])
		}()
	}
	wg.Wait()
	var out []KernelReport
	for i, kr := range reports {
		if started[i] {
			out = append(out, kr)
		}
	}
	return out
}

// runKernel boots one kernel with the accelerator the policy gives, and
// once more under TCG when KVM on trial failed it; the failed attempt's
// logs are kept in the kernel's KVMAttemptDir.
func (m *matrixRun) runKernel(ctx context.Context, k Kernel, ck *CachedKernel) KernelReport {
	logDir := filepath.Join(m.o.ResultsDir, k.Name)
	aside := logDir + ".failed-kvm"
	for _, d := range []string{logDir, aside} {
		if err := os.RemoveAll(d); err != nil {
			return KernelReport{Kernel: k, Cached: ck, Console: &Console{}, Verdict: Verdict{OutcomeNotRun, err.Error()}}
		}
	}
	accel, why, trial := m.policy.next()
	kr := m.boot(ctx, k, ck, accel, logDir)
	kr.Accel, kr.AccelWhy = accel, why
	if !trial {
		return kr
	}
	failure := kvmFailure(kr.Boot, kr.Console)
	switch {
	case failure != "":
		m.policy.kvmFailed(k.Name, failure)
	case kr.Console.Booted:
		m.policy.booted(k.Name)
	}
	// The kernels waiting for KVM's probe go on now, beside this
	// kernel's run under TCG if there is one.
	m.policy.answered()
	if failure == "" || ctx.Err() != nil {
		return kr
	}
	m.logf("%s failed under KVM (%s); running it again under TCG, and the rest of the run too", k.Name, failure)
	attempt := &Attempt{Accel: accel, Failure: failure, Verdict: kr.Verdict, Elapsed: kr.Boot.Elapsed, LogDir: filepath.Join(logDir, KVMAttemptDir)}
	if err := os.Rename(logDir, aside); err != nil {
		kr.Verdict = Verdict{OutcomeNotRun, "keeping the KVM attempt's logs: " + err.Error()}
		return kr
	}
	tcg := m.boot(ctx, k, ck, AccelTCG, logDir)
	tcg.Accel, tcg.AccelWhy = AccelTCG, "run again after KVM failed it: "+failure
	tcg.KVMAttempt = attempt
	if err := os.Rename(aside, attempt.LogDir); err != nil {
		m.logf("keeping the KVM attempt's logs of %s: %v", k.Name, err)
		attempt.LogDir = aside
	}
	return tcg
}

// boot runs one kernel once under accel and files its logs in logDir.
func (m *matrixRun) boot(ctx context.Context, k Kernel, ck *CachedKernel, accel, logDir string) KernelReport {
	kr := KernelReport{Kernel: k, Cached: ck, Console: &Console{}, LogDir: logDir}
	if err := os.MkdirAll(kr.LogDir, 0o755); err != nil {
		kr.Verdict = Verdict{OutcomeNotRun, err.Error()}
		return kr
	}
	con, err := os.Create(filepath.Join(kr.LogDir, "console.log"))
	if err != nil {
		kr.Verdict = Verdict{OutcomeNotRun, err.Error()}
		return kr
	}
	defer con.Close()
	var stderr bytes.Buffer
	// A kernel boots in seconds under KVM, so a KVM run must show the
	// init's first marker within the watchdog.
	var bootDeadline time.Duration
	if accel == AccelKVM {
		bootDeadline = m.o.Watchdog
	}
	vm := VM{
		Name: k.Name, CPUs: k.CPUs, QEMU: m.o.QEMU, Accel: accel, Kernel: ck.Vmlinuz, Initrd: m.initrd,
		Timeout: m.o.VMTimeout, Watchdog: m.o.Watchdog, Dir: m.scratch,
		BootDeadline: bootDeadline,
		Heartbeat:    filepath.Join(m.scratch, k.Name+".heartbeat"),
		Console:      con, Stderr: &stderr,
	}
	m.logf("booting %s (%s) with %s, timeout %s, watchdog %s", k.Name, ck.Release, accel, m.o.VMTimeout, m.o.Watchdog)
	kr.Boot = vm.Run(ctx)
	os.WriteFile(filepath.Join(kr.LogDir, "qemu.log"),
		[]byte(strings.Join(append([]string{m.o.QEMU}, vm.Args()...), " ")+"\n\n"+stderr.String()), 0o644)
	kr.Console = ParseConsole(kr.Boot.Lines)
	kr.Boot.Lines = nil // kept in console.log; not worth holding
	kr.Verdict = Decide(kr.Boot, kr.Console, m.plan.Steps, stderr.String())
	if c := kr.Console; c.Booted && c.Release != ck.Release && kr.Verdict.OK() {
		kr.Verdict = Verdict{OutcomeInitError, fmt.Sprintf("guest runs kernel %s, expected %s", c.Release, ck.Release)}
	}
	if err := writeStepLogs(kr.LogDir, kr.Console); err != nil {
		m.logf("writing logs of %s: %v", k.Name, err)
	}
	m.logf("%s: %s in %.1fs (boot %.1fs, longest silence %.1fs, up to %.1fs)", k.Name, kr.Verdict, kr.Boot.Elapsed.Seconds(),
		kr.Boot.Booted.Seconds(), kr.Boot.LongestSilence.Seconds(), kr.Boot.SilenceEnded.Seconds())
	return kr
}

// writeStepLogs files each step's output as <package>.log, or
// <package>.bench.log for the benchmark smoke run, under dir.
func writeStepLogs(dir string, c *Console) error {
	var errs []error
	for _, s := range c.Steps {
		p := filepath.Join(dir, StepLogName(s.Package, s.Phase))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		text := strings.Join(s.Output, "\n") + "\n"
		if s.Phase == wire.PhaseBench {
			text = BenchDisclaimer + "\n\n" + text
		}
		errs = append(errs, os.WriteFile(p, []byte(text), 0o644))
	}
	return errors.Join(errs...)
}

// StepLogName is the log file of a step, relative to its kernel's folder:
// the package path inside the module, then .log or .bench.log.
func StepLogName(importPath string, phase wire.Phase) string {
	rel := relToModule(importPath)
	if phase == wire.PhaseBench {
		return rel + ".bench.log"
	}
	return rel + ".log"
}

// modulePath is this module's path; logs drop it from package paths.
const modulePath = "github.com/ebpf-zc/ebpf"

func relToModule(importPath string) string {
	if rel, ok := strings.CutPrefix(importPath, modulePath+"/"); ok {
		return rel
	}
	if importPath == modulePath {
		return "ebpf"
	}
	return strings.ReplaceAll(importPath, "/", "_")
}

// BenchDisclaimer heads every benchmark log and the summary.
const BenchDisclaimer = "Benchmarks in the VMs are a smoke test only (-test.benchtime=" + BenchTime +
	", small rings, emulated or shared CPUs): they show each benchmark runs, and their numbers are NOT performance data."

// prefixWriter indents apt's output under the runner's own lines.
type prefixWriter struct {
	w       io.Writer
	midLine bool
}

// Write implements io.Writer.
func (p *prefixWriter) Write(b []byte) (int, error) {
	if p.w == nil {
		return len(b), nil
	}
	for _, part := range strings.SplitAfter(string(b), "\n") {
		if part == "" {
			continue
		}
		if !p.midLine {
			io.WriteString(p.w, "    ")
		}
		io.WriteString(p.w, part)
		p.midLine = !strings.HasSuffix(part, "\n")
	}
	return len(b), nil
}
