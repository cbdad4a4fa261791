package wire

import (
	"encoding/json"
	"fmt"
	"os"
)

// PlanPath is where the guest init finds the plan inside the initramfs.
// One initramfs serves every kernel, so the plan names none.
const PlanPath = "/vmtest/plan.json"

// KernelParam is the kernel command line option that tells the guest the
// host's name for the kernel under test ("vmtest.kernel=6.1"). The init
// echoes it in its boot marker, so a log cannot be filed under the wrong
// kernel.
const KernelParam = "vmtest.kernel"

// Phase names one kind of run of a test binary.
type Phase string

// The phases a step can be in. Benchmarks run after the tests, separately,
// so a benchmark that hangs cannot hide test results.
const (
	// PhaseTest runs the tests with -test.v.
	PhaseTest Phase = "test"
	// PhaseBench is the benchmark smoke run.
	PhaseBench Phase = "bench"
)

// Plan is everything the guest init needs to know: which binaries to run,
// with which arguments and environment, and how long each may take.
type Plan struct {
	// Env is added to every step's environment.
	Env []string `json:"env,omitempty"`
	// Steps run one after another, each as its own process.
	Steps []Step `json:"steps"`
}

// Step is one run of one test binary.
type Step struct {
	// Package is the Go import path the binary was built from.
	Package string `json:"package"`
	// Phase says whether this runs the tests or the benchmark smoke.
	Phase Phase `json:"phase"`
	// Binary is the absolute path of the test binary inside the guest.
	Binary string `json:"binary"`
	// Dir is the working directory, holding a copy of the package's
	// testdata folder, as `go test` would run it from the package folder.
	Dir string `json:"dir"`
	// Args are the test binary's flags (-test.v, -test.bench, ...).
	Args []string `json:"args"`
	// TimeoutSeconds bounds the step inside the guest; zero means none.
	// The host keeps its own timeout for the whole VM on top of this.
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// WriteFile stores p as JSON at path.
func (p *Plan) WriteFile(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadPlan loads a plan written by WriteFile.
func ReadPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return &p, nil
}
