package vmtest

import (
	"fmt"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// RingBenchEnv sizes the rings of the ringbuf benchmarks, in bytes. They
// honour it so that benchmarks inside a 1G VM do not allocate their
// 256 MiB rings.
const RingBenchEnv = "RINGBUF_BENCH_RING"

// GuestEnv is the environment every step gets inside the VM.
var GuestEnv = []string{RingBenchEnv + "=4194304"}

// BenchTime is the -test.benchtime of the smoke run: enough iterations to
// show a benchmark works, too few (and on an emulated CPU) to measure it.
const BenchTime = "100x"

// PlanOptions shape the steps of a plan.
type PlanOptions struct {
	// TestTimeout is go test's -test.timeout for each test binary.
	TestTimeout time.Duration
	// BenchTimeout bounds each benchmark smoke run inside the guest.
	BenchTimeout time.Duration
	// Run, when set, is passed as -test.run.
	Run string
	// Bench adds a benchmark smoke step for packages with benchmarks.
	Bench bool
	// Env is added to GuestEnv.
	Env []string
}

// MakePlan lists the steps for the given packages: every package's tests
// first, then the benchmark smoke runs, so a stuck benchmark cannot take
// test results down with it.
func MakePlan(pkgs []TestPackage, o PlanOptions) *wire.Plan {
	p := &wire.Plan{Env: append(append([]string{}, GuestEnv...), o.Env...)}
	for _, pkg := range pkgs {
		args := []string{"-test.v", "-test.count=1", fmt.Sprintf("-test.timeout=%s", o.TestTimeout)}
		if o.Run != "" {
			args = append(args, "-test.run="+o.Run)
		}
		p.Steps = append(p.Steps, wire.Step{
			Package: pkg.ImportPath,
			Phase:   wire.PhaseTest,
			Binary:  GuestBinary(pkg),
			Dir:     GuestDir(pkg),
			Args:    args,
			// A minute past go test's own timeout, so its goroutine dump
			// comes out before the init kills the binary.
			TimeoutSeconds: int((o.TestTimeout + time.Minute).Seconds()),
		})
	}
	if !o.Bench {
		return p
	}
	for _, pkg := range pkgs {
		if !pkg.HasBenchmarks {
			continue
		}
		p.Steps = append(p.Steps, wire.Step{
			Package: pkg.ImportPath,
			Phase:   wire.PhaseBench,
			Binary:  GuestBinary(pkg),
			Dir:     GuestDir(pkg),
			Args:    []string{"-test.run=^$", "-test.bench=.", "-test.benchtime=" + BenchTime, "-test.count=1"},
			// -test.timeout is not relied on for benchmarks; the init
			// enforces this bound and the host has its own per VM.
			TimeoutSeconds: int(o.BenchTimeout.Seconds()),
		})
	}
	return p
}
