package vmtest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// Console is what the guest said on its serial console.
type Console struct {
	// Booted says the init got as far as printing its BOOTED marker;
	// Release is the kernel release it reported then.
	Booted  bool
	Release string
	// Steps are the steps the console shows begun, in order.
	Steps []*StepResult
	// Done says the init printed its last marker.
	Done       bool
	DoneStatus string
	// Errors are the init's own error reports; Notes its remarks.
	Errors []string
	Notes  []string
	// Panic is the kernel's "Kernel panic" line, if there was one.
	Panic string
	// Last is the last non-empty line, for reporting a hang.
	Last string
}

// StepResult is what the console shows of one step.
type StepResult struct {
	// Package and Phase name the step, as in the plan.
	Package string
	Phase   wire.Phase
	// Ended says a RESULT marker closed the step; Exit, Why and Seconds
	// come from it.
	Ended   bool
	Exit    int
	Why     string
	Seconds float64
	// Output is everything printed between the step's markers.
	Output []string
}

// OK says the step ended and exited 0.
func (s *StepResult) OK() bool { return s != nil && s.Ended && s.Exit == 0 }

// Step finds the step for a package and phase; nil when never begun.
func (c *Console) Step(pkg string, phase wire.Phase) *StepResult {
	for _, s := range c.Steps {
		if s.Package == pkg && s.Phase == phase {
			return s
		}
	}
	return nil
}

// panicLine is how every kernel version starts its panic message
// ("Kernel panic - not syncing: ..." from kernel/panic.c).
const panicLine = "Kernel panic - not syncing"

// ParseConsole splits console lines into steps by the guest's markers.
func ParseConsole(lines []string) *Console {
	c := &Console{}
	var cur *StepResult
	for _, line := range lines {
		if strings.TrimSpace(line) != "" {
			c.Last = line
		}
		if c.Panic == "" && strings.Contains(line, panicLine) {
			c.Panic = strings.TrimSpace(line[strings.Index(line, panicLine):])
		}
		m, ok := wire.ParseMarker(line)
		if !ok {
			if cur != nil {
				cur.Output = append(cur.Output, line)
			}
			continue
		}
		// Output on the marker's line before the marker belongs to the
		// step (a test's last line without newline).
		if before := line[:strings.Index(line, wire.MarkerPrefix)]; cur != nil && strings.TrimSpace(before) != "" {
			cur.Output = append(cur.Output, before)
		}
		f := m.Fields
		switch m.Kind {
		case wire.KindBooted:
			c.Booted, c.Release = true, f[wire.FieldRelease]
		case wire.KindBegin:
			cur = &StepResult{Package: f[wire.FieldPkg], Phase: wire.Phase(f[wire.FieldPhase])}
			c.Steps = append(c.Steps, cur)
		case wire.KindResult:
			s := cur
			if s == nil || s.Package != f[wire.FieldPkg] || s.Phase != wire.Phase(f[wire.FieldPhase]) {
				// A RESULT without its BEGIN (lost line): still record it.
				s = &StepResult{Package: f[wire.FieldPkg], Phase: wire.Phase(f[wire.FieldPhase])}
				c.Steps = append(c.Steps, s)
			}
			exit, err := strconv.Atoi(f[wire.FieldExit])
			if err != nil {
				exit = -1
			}
			s.Ended, s.Exit, s.Why = true, exit, f[wire.FieldWhy]
			s.Seconds, _ = strconv.ParseFloat(f[wire.FieldSeconds], 64)
			cur = nil
		case wire.KindDone:
			c.Done, c.DoneStatus = true, f[wire.FieldStatus]
		case wire.KindError:
			c.Errors = append(c.Errors, f[wire.FieldMsg])
		case wire.KindNote:
			c.Notes = append(c.Notes, f[wire.FieldMsg])
		}
	}
	return c
}

// TestCounts are the results `go test -v` printed.
type TestCounts struct {
	// Passed, Failed and Skipped count "--- PASS", "--- FAIL" and
	// "--- SKIP" lines.
	Passed, Failed, Skipped int
}

// Add sums counts.
func (t *TestCounts) Add(o TestCounts) {
	t.Passed += o.Passed
	t.Failed += o.Failed
	t.Skipped += o.Skipped
}

// testResultLine matches the result lines of -test.v output, subtests
// (indented) included: "--- PASS: TestX (0.00s)".
var testResultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): `)

// CountTests counts the result lines of -test.v output. Subtests count
// as tests of their own, as gotestsum counts them.
func CountTests(lines []string) TestCounts {
	var t TestCounts
	for _, l := range lines {
		m := testResultLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		switch m[1] {
		case "PASS":
			t.Passed++
		case "FAIL":
			t.Failed++
		case "SKIP":
			t.Skipped++
		}
	}
	return t
}

// benchmarkLine matches a benchmark result: name, iterations, ns/op.
var benchmarkLine = regexp.MustCompile(`^Benchmark\S*\s+\d+\s+[0-9.]+ ns/op`)

// CountBenchmarks counts the benchmark result lines in output.
func CountBenchmarks(lines []string) int {
	n := 0
	for _, l := range lines {
		if benchmarkLine.MatchString(l) {
			n++
		}
	}
	return n
}
