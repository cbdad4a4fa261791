package vmtest

import (
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

func consoleLines(t *testing.T, text string) []string {
	t.Helper()
	return strings.Split(strings.TrimPrefix(text, "\n"), "\n")
}

const passingConsole = `
[    1.49] Run /init as init process
VMTEST-NOTE msg="mount cgroup2 on /sys/fs/cgroup: no such device"
VMTEST-BOOTED kernel=6.1 release=6.1.0-56-cloud-amd64
VMTEST-BEGIN pkg=example.com/m/a phase=test
=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
=== RUN   TestB/sub
    b_test.go:9: kernel 6.1 lacks X
--- PASS: TestB (0.00s)
    --- SKIP: TestB/sub (0.00s)
PASS
VMTEST-RESULT pkg=example.com/m/a phase=test exit=0 seconds=0.3
VMTEST-BEGIN pkg=example.com/m/a phase=bench
BenchmarkA-1   	     100	      2066 ns/op
BenchmarkB/small-1 	     100	   206675 ns/op	  64 B/op
PASSVMTEST-RESULT pkg=example.com/m/a phase=bench exit=0 seconds=0.1
VMTEST-DONE status=pass
`

func TestParseConsole(t *testing.T) {
	c := ParseConsole(consoleLines(t, passingConsole))
	if !c.Booted || c.Release != "6.1.0-56-cloud-amd64" || !c.Done || c.DoneStatus != "pass" {
		t.Errorf("Booted %v %q, Done %v %q", c.Booted, c.Release, c.Done, c.DoneStatus)
	}
	if len(c.Notes) != 1 || len(c.Errors) != 0 {
		t.Errorf("notes %q, errors %q", c.Notes, c.Errors)
	}
	if len(c.Steps) != 2 {
		t.Fatalf("got %d steps, want 2", len(c.Steps))
	}
	test := c.Step("example.com/m/a", wire.PhaseTest)
	if !test.OK() || len(test.Output) != 8 || test.Seconds != 0.3 {
		t.Errorf("test step: ok %v, %d output lines, %v s", test.OK(), len(test.Output), test.Seconds)
	}
	if got, want := CountTests(test.Output), (TestCounts{Passed: 2, Skipped: 1}); got != want {
		t.Errorf("CountTests = %+v, want %+v", got, want)
	}
	bench := c.Step("example.com/m/a", wire.PhaseBench)
	if !bench.OK() {
		t.Errorf("bench step not ok: %+v", bench)
	}
	// "PASS" shares its line with the marker and still belongs to the step.
	if n := len(bench.Output); n != 3 || bench.Output[n-1] != "PASS" {
		t.Errorf("bench output %q", bench.Output)
	}
	if got := CountBenchmarks(bench.Output); got != 2 {
		t.Errorf("CountBenchmarks = %d, want 2", got)
	}
	if c.Step("example.com/m/other", wire.PhaseTest) != nil {
		t.Error("found a step that never ran")
	}
}

func TestParseConsoleTrouble(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		check      func(t *testing.T, c *Console)
	}{
		{"panic", `
VMTEST-BOOTED kernel=5.10 release=5.10.0-46-cloud-amd64
VMTEST-BEGIN pkg=p phase=test
=== RUN   TestCrash
[    3.1] Kernel panic - not syncing: sysrq triggered crash
[    3.1] CPU: 0 PID: 80 Comm: p.test`, func(t *testing.T, c *Console) {
			if c.Panic != "Kernel panic - not syncing: sysrq triggered crash" {
				t.Errorf("Panic = %q", c.Panic)
			}
			if s := c.Step("p", wire.PhaseTest); s == nil || s.Ended {
				t.Errorf("step %+v, want begun and not ended", s)
			}
			if c.Done {
				t.Error("Done without DONE marker")
			}
		}},
		{"lost BEGIN", `
VMTEST-BOOTED kernel=5.10 release=5.10.0-46-cloud-amd64
VMTEST-RESULT pkg=p phase=test exit=1 seconds=2.0
VMTEST-DONE status=fail`, func(t *testing.T, c *Console) {
			if s := c.Step("p", wire.PhaseTest); s == nil || !s.Ended || s.Exit != 1 {
				t.Errorf("step %+v, want ended with exit 1", s)
			}
		}},
		{"cut-off RESULT", `
VMTEST-BEGIN pkg=p phase=test
--- PASS: TestA (0.00s)
VMTEST-RESULT pkg=p phase=test exi`, func(t *testing.T, c *Console) {
			if s := c.Step("p", wire.PhaseTest); s == nil || s.Ended {
				t.Errorf("step %+v, want not ended", s)
			}
			if c.Last != "VMTEST-RESULT pkg=p phase=test exi" {
				t.Errorf("Last = %q", c.Last)
			}
		}},
		{"timeout in guest", `
VMTEST-BEGIN pkg=p phase=bench
VMTEST-RESULT pkg=p phase=bench exit=-1 seconds=300.0 why=timeout`, func(t *testing.T, c *Console) {
			s := c.Step("p", wire.PhaseBench)
			if s == nil || !s.Ended || s.Exit != -1 || s.Why != "timeout" || s.OK() {
				t.Errorf("step %+v", s)
			}
		}},
		{"init error", `
VMTEST-ERROR msg="open /vmtest/plan.json: no such file or directory"`, func(t *testing.T, c *Console) {
			if len(c.Errors) != 1 || c.Booted {
				t.Errorf("errors %q, booted %v", c.Errors, c.Booted)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, ParseConsole(consoleLines(t, tt.text)))
		})
	}
}

func TestCountTests(t *testing.T) {
	for _, tt := range []struct {
		name, out string
		want      TestCounts
	}{
		{"empty", "", TestCounts{}},
		{"mixed", "--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.01s)\n    --- FAIL: TestB/x (0.00s)\n--- SKIP: TestC (0.00s)\nFAIL",
			TestCounts{Passed: 1, Failed: 2, Skipped: 1}},
		{"not result lines", "=== RUN   TestA\n    a_test.go:3: --- PASS: is not at the start\nok  \tp\t0.1s", TestCounts{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := CountTests(strings.Split(tt.out, "\n")); got != tt.want {
				t.Errorf("CountTests = %+v, want %+v", got, tt.want)
			}
		})
	}
}
