package vmtest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

func stepNames(t *testing.T, p *wire.Plan) string {
	t.Helper()
	var s []string
	for _, st := range p.Steps {
		s = append(s, st.Package+":"+string(st.Phase))
	}
	return strings.Join(s, " ")
}

func TestMakePlan(t *testing.T) {
	pkgs := []TestPackage{
		{ImportPath: "m/a", Rel: "a", HasBenchmarks: true},
		{ImportPath: "m/b", Rel: "b"},
		{ImportPath: "m/c", Rel: "c", HasBenchmarks: true},
	}
	o := PlanOptions{TestTimeout: 10 * time.Minute, BenchTimeout: 5 * time.Minute, Bench: true}
	p := MakePlan(pkgs, o)
	if got, want := stepNames(t, p), "m/a:test m/b:test m/c:test m/a:bench m/c:bench"; got != want {
		t.Errorf("steps = %s, want %s", got, want)
	}
	if !slices.Contains(p.Env, "RINGBUF_BENCH_RING=4194304") {
		t.Errorf("guest env %q lacks the small ring size", p.Env)
	}
	test, bench := p.Steps[0], p.Steps[3]
	for _, want := range []string{"-test.v", "-test.timeout=10m0s"} {
		if !slices.Contains(test.Args, want) {
			t.Errorf("test args %q lack %s", test.Args, want)
		}
	}
	if test.TimeoutSeconds <= int(o.TestTimeout.Seconds()) {
		t.Errorf("guest timeout %ds does not leave go test's own timeout room", test.TimeoutSeconds)
	}
	for _, want := range []string{"-test.run=^$", "-test.bench=.", "-test.benchtime=100x"} {
		if !slices.Contains(bench.Args, want) {
			t.Errorf("bench args %q lack %s", bench.Args, want)
		}
	}
	if bench.TimeoutSeconds != 300 {
		t.Errorf("bench timeout %ds, want 300", bench.TimeoutSeconds)
	}
	if test.Binary != "/pkgs/a/a.test" || test.Dir != "/pkgs/a" {
		t.Errorf("binary %s in %s", test.Binary, test.Dir)
	}

	o.Bench, o.Run = false, "TestX"
	p = MakePlan(pkgs, o)
	if got, want := stepNames(t, p), "m/a:test m/b:test m/c:test"; got != want {
		t.Errorf("without benchmarks: steps = %s, want %s", got, want)
	}
	if !slices.Contains(p.Steps[0].Args, "-test.run=TestX") {
		t.Errorf("args %q lack -test.run", p.Steps[0].Args)
	}
}

func TestStepLogName(t *testing.T) {
	for _, tt := range []struct {
		pkg   string
		phase wire.Phase
		want  string
	}{
		{"github.com/ebpf-zc/ebpf/ringbuf", wire.PhaseTest, "ringbuf.log"},
		{"github.com/ebpf-zc/ebpf/internal/vmtest", wire.PhaseBench, "internal/vmtest.bench.log"},
		{"github.com/ebpf-zc/ebpf", wire.PhaseTest, "ebpf.log"},
		{"example.com/other/pkg", wire.PhaseTest, "example.com_other_pkg.log"},
	} {
		if got := StepLogName(tt.pkg, tt.phase); got != tt.want {
			t.Errorf("StepLogName(%s, %s) = %s, want %s", tt.pkg, tt.phase, got, tt.want)
		}
	}
}
