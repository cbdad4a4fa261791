package vmtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests in this file run several kernels through runKernels on the
// fake QEMU of fakeqemu_test.go, which notes in a trace when each VM
// starts and ends. They test the host's scheduling, so they skip inside
// the matrix's VMs, where they would add seconds of sleep on every kernel.

// fakeKernels runs names as a matrix on m, jobs VMs at a time, and returns
// the reports and the trace, one "start|end <kernel> <accel>" a line.
func fakeKernels(t *testing.T, m *matrixRun, jobs int, names ...string) ([]KernelReport, []string) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv(fakeTraceEnv, trace)
	cached := map[string]*CachedKernel{}
	m.o.Kernels = nil
	for _, name := range names {
		m.o.Kernels = append(m.o.Kernels, Kernel{Name: name})
		cached[name] = &CachedKernel{Name: name, Release: fakeRelease, Vmlinuz: "/nonexistent/vmlinuz"}
	}
	m.o.Jobs = jobs
	reports := m.runKernels(t.Context(), cached, nil)
	var got []string
	for _, kr := range reports {
		got = append(got, kr.Kernel.Name)
	}
	if !slices.Equal(got, names) {
		t.Fatalf("reports for %q, want %q in that order", got, names)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	return reports, strings.Split(strings.TrimSpace(string(b)), "\n")
}

// mostAtOnce is the most VMs the trace shows running at the same time.
func mostAtOnce(trace []string) int {
	running, most := 0, 0
	for _, line := range trace {
		switch {
		case strings.HasPrefix(line, "start "):
			running++
			most = max(most, running)
		case strings.HasPrefix(line, "end "):
			running--
		}
	}
	return most
}

// checkOwnLogs fails the test unless each kernel's console.log is its own.
func checkOwnLogs(t *testing.T, reports []KernelReport) {
	t.Helper()
	for _, kr := range reports {
		if got := readLog(t, kr.LogDir, "console.log"); !strings.Contains(got, "fake guest of kernel "+kr.Kernel.Name+"\n") {
			t.Errorf("%s: console.log is not its own:\n%s", kr.Kernel.Name, got)
		}
	}
}

// Kernels run side by side, up to jobs at a time, and are reported in
// the matrix's order, each with its own logs.
func TestRunKernelsSideBySide(t *testing.T) {
	skipInVM(t)
	names := []string{"a", "b", "c", "d"}
	for _, jobs := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("jobs=%d", jobs), func(t *testing.T) {
			m := fakeMatrix(t, "pass", AccelTCG)
			reports, trace := fakeKernels(t, m, jobs, names...)
			if most := mostAtOnce(trace); most != jobs {
				t.Errorf("%d VMs ran at once with -jobs %d:\n%s", most, jobs, strings.Join(trace, "\n"))
			}
			for _, kr := range reports {
				if !kr.Verdict.OK() || kr.Accel != AccelTCG {
					t.Errorf("%s: %q under %s, want ok under tcg", kr.Kernel.Name, kr.Verdict, kr.Accel)
				}
			}
			checkOwnLogs(t, reports)
		})
	}
}

// A failing kernel and a hung one are reported for themselves; the
// kernels beside them pass.
func TestRunKernelsFailureAlone(t *testing.T) {
	skipInVM(t)
	m := fakeMatrix(t, "a=pass b=silent c=fail d=pass", AccelTCG)
	reports, _ := fakeKernels(t, m, 2, "a", "b", "c", "d")
	want := map[string]Outcome{"a": OutcomePass, "b": OutcomeHang, "c": OutcomeTestsFailed, "d": OutcomePass}
	for _, kr := range reports {
		if kr.Verdict.Outcome != want[kr.Kernel.Name] {
			t.Errorf("%s: %q, want %s", kr.Kernel.Name, kr.Verdict, want[kr.Kernel.Name])
		}
	}
	checkOwnLogs(t, []KernelReport{reports[0], reports[2], reports[3]})

	r := &Report{Accel: AccelTCG, AccelReason: "test", Plan: fakePlan, Kernels: reports, Jobs: 2,
		Builds: []PackageBuild{{Pkg: TestPackage{ImportPath: "p"}}}}
	var summary strings.Builder
	r.WriteSummary(&summary)
	for _, s := range []string{"\nb failed: hang; kept: ", "\nc failed: tests failed; kept: ", "up to 2 VMs at a time", "2 passed, 1 failed, 0 skipped"} {
		if !strings.Contains(summary.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, summary.String())
		}
	}
	for _, s := range []string{"a failed", "d failed"} {
		if strings.Contains(summary.String(), s) {
			t.Errorf("summary has %q:\n%s", s, summary.String())
		}
	}
}

// Under auto, the first kernel is KVM's probe and runs alone under KVM;
// when KVM fails it, the other kernels run side by side under TCG from
// the start.
func TestRunKernelsKVMProbe(t *testing.T) {
	skipInVM(t)
	m := fakeMatrix(t, "a=kvm-abort b=pass c=pass d=pass", AccelAuto)
	reports, trace := fakeKernels(t, m, 2, "a", "b", "c", "d")
	if len(trace) < 2 || trace[0] != "start a kvm" || trace[1] != "end a kvm" {
		t.Errorf("KVM's probe did not run alone first:\n%s", strings.Join(trace, "\n"))
	}
	if most := mostAtOnce(trace); most != 2 {
		t.Errorf("%d VMs ran at once after the probe, want 2:\n%s", most, strings.Join(trace, "\n"))
	}
	for i, kr := range reports {
		if !kr.Verdict.OK() || kr.Accel != AccelTCG {
			t.Errorf("%s: %q under %s, want ok under tcg", kr.Kernel.Name, kr.Verdict, kr.Accel)
		}
		if (kr.KVMAttempt != nil) != (i == 0) {
			t.Errorf("%s: KVM attempt %+v; want one for the probe only", kr.Kernel.Name, kr.KVMAttempt)
		}
		if i > 0 && !strings.Contains(kr.AccelWhy, "KVM failed on kernel a earlier in this run") {
			t.Errorf("%s: tcg because %q", kr.Kernel.Name, kr.AccelWhy)
		}
	}
	checkOwnLogs(t, reports)
}

// Once KVM's probe booted, kernels go on trial side by side: each that
// KVM fails runs again under TCG, even when the other's failure moved the
// run to TCG first; the kernels after them start under TCG.
func TestRunKernelsKVMTrialsSideBySide(t *testing.T) {
	skipInVM(t)
	m := fakeMatrix(t, "a=pass b=kvm-abort-late c=kvm-abort-late d=pass", AccelAuto)
	reports, trace := fakeKernels(t, m, 2, "a", "b", "c", "d")
	a, b, c, d := reports[0], reports[1], reports[2], reports[3]
	if !a.Verdict.OK() || a.Accel != AccelKVM || a.KVMAttempt != nil {
		t.Errorf("a: %q under %s, attempt %+v; want ok under kvm", a.Verdict, a.Accel, a.KVMAttempt)
	}
	if !slices.Contains(trace, "start b kvm") || !slices.Contains(trace, "start c kvm") {
		t.Fatalf("b and c did not both go on trial under KVM:\n%s", strings.Join(trace, "\n"))
	}
	for _, kr := range []KernelReport{b, c} {
		if !kr.Verdict.OK() || kr.Accel != AccelTCG || kr.KVMAttempt == nil {
			t.Errorf("%s: %q under %s, attempt %+v; want ok under tcg after a KVM attempt", kr.Kernel.Name, kr.Verdict, kr.Accel, kr.KVMAttempt)
		}
	}
	if !d.Verdict.OK() || d.Accel != AccelTCG || d.KVMAttempt != nil || !strings.Contains(d.AccelWhy, "KVM failed on kernel ") {
		t.Errorf("d: %q under %s (%s), attempt %+v; want ok under tcg from the start", d.Verdict, d.Accel, d.AccelWhy, d.KVMAttempt)
	}
	checkOwnLogs(t, reports)
}

// A kernel that cannot be had is reported in its place, without a VM.
func TestRunKernelsNotRun(t *testing.T) {
	skipInVM(t)
	m := fakeMatrix(t, "pass", AccelAuto)
	m.o.Kernels = []Kernel{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	m.o.Jobs = 2
	cached := map[string]*CachedKernel{
		"b": {Name: "b", Release: fakeRelease, Vmlinuz: "/nonexistent/vmlinuz"},
		"c": {Name: "c", Release: fakeRelease, Vmlinuz: "/nonexistent/vmlinuz"},
	}
	notRun := map[string]Verdict{"a": {OutcomeNotRun, "not cached, and fetching is off"}}
	reports := m.runKernels(t.Context(), cached, notRun)
	if len(reports) != 3 || reports[0].Verdict.Outcome != OutcomeNotRun || !reports[1].Verdict.OK() || !reports[2].Verdict.OK() {
		t.Fatalf("reports: %+v", reports)
	}
	// b was KVM's probe, though not the first kernel of the matrix.
	if reports[1].Accel != AccelKVM || reports[2].AccelWhy != "KVM ran kernel b earlier in this run" {
		t.Errorf("b under %s, c under %s (%s)", reports[1].Accel, reports[2].Accel, reports[2].AccelWhy)
	}
}

// An interrupted run reports the kernels it had started as interrupted
// and starts no more, with -jobs 1 as a run in turn did.
func TestRunKernelsInterrupted(t *testing.T) {
	skipInVM(t)
	for _, jobs := range []int{1, 2} {
		t.Run(fmt.Sprintf("jobs=%d", jobs), func(t *testing.T) {
			m := fakeMatrix(t, "silent", AccelTCG)
			m.o.Kernels = []Kernel{{Name: "a"}, {Name: "b"}, {Name: "c"}}
			m.o.Jobs = jobs
			cached := map[string]*CachedKernel{}
			for _, k := range m.o.Kernels {
				cached[k.Name] = &CachedKernel{Name: k.Name, Release: fakeRelease, Vmlinuz: "/nonexistent/vmlinuz"}
			}
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(500*time.Millisecond, cancel)
			reports := m.runKernels(ctx, cached, nil)
			if len(reports) != jobs {
				t.Fatalf("%d reports, want the %d kernels started before ^C", len(reports), jobs)
			}
			for _, kr := range reports {
				if kr.Verdict.Outcome != OutcomeInterrupted {
					t.Errorf("%s: %q, want interrupted", kr.Kernel.Name, kr.Verdict)
				}
			}
		})
	}
}

// ^C just before a VM starts (the other kernel of TestRunKernelsInterrupted
// with jobs=2, on a slow host) interrupts it too: not a QEMU error.
func TestRunInterruptedBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b := VM{QEMU: os.Args[0], Dir: t.TempDir(), Timeout: time.Minute}.Run(ctx)
	if !b.Interrupted || b.StartErr != nil {
		t.Errorf("Run after ^C = interrupted %v, start error %v; want interrupted", b.Interrupted, b.StartErr)
	}
}
