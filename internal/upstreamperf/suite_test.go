//go:build linux

package upstreamperf

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Differ are upstream's tests that check a rule ours deliberately does
// not follow: v0.22's Reader reads a buffer only after a wakeup, so a
// record that arrived after the deadline or Flush ended a wait is held
// back until that error was returned. Ours looks at the buffers before it
// waits, as this module's ring buffer reader does (its Flush and deadline
// rules), so it returns such a record first. They must fail, and exactly
// at that point.
var Differ = map[string]string{
	"TestReaderSetDeadlinePendingEvents": "Expected os.ErrDeadlineExceeded from second Read",
	"TestReaderFlushPendingEvents":       "Expected ErrFlushed from second Read",
}

// TestUpstreamPerfSuite runs cilium/ebpf's perf/reader_test.go, from the
// module cache, against our perf package (see the package doc). Every
// test but those in Dropped and Differ must pass.
func TestUpstreamPerfSuite(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err == nil {
		_, err = os.Stat(filepath.Join(repo, "go.mod"))
	}
	if err != nil {
		t.Skipf("needs this repository's checkout around the test (a test VM has only the binary): %v", err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("needs the go command (a test VM has none): %v", err)
	}
	goEnv := append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := goOutput(t, goEnv, repo, goCmd, "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/cilium/ebpf")
	if err != nil {
		t.Fatal(err)
	}
	upstreamDir, version, _ := strings.Cut(strings.TrimSpace(out), " ")

	dir := t.TempDir()
	if err := Prepare(dir, repo, upstreamDir, version); err != nil {
		t.Fatal(err)
	}
	out, err = goOutput(t, goEnv, dir, goCmd, "test", "-count=1", "-v", "./perf/")
	results := parseResults(out)
	if len(results) == 0 {
		t.Fatalf("no test ran (%v):\n%s", err, out)
	}
	if _, ok := results["TestPerfReader"]; !ok {
		t.Fatalf("TestPerfReader did not run:\n%s", out)
	}
	if strings.Contains(out, "not available here") || strings.Contains(out, "--- SKIP") {
		t.Logf("some upstream tests skipped:\n%s", out)
	}
	var names []string
	for name := range results {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		result := results[name]
		want, differs := Differ[name]
		switch {
		case differs && result == "FAIL" && strings.Contains(out, want):
			t.Logf("%s: FAIL, as expected (%s: ours returns the record first)", name, want)
		case differs:
			t.Errorf("%s: %s, want a FAIL at %q; output:\n%s", name, result, want, out)
		case result != "PASS":
			t.Errorf("%s: %s; output:\n%s", name, result, out)
		default:
			t.Logf("%s: PASS", name)
		}
	}
}

// goOutput runs the go command in dir and returns its combined output.
func goOutput(t *testing.T, env []string, dir, goCmd string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(goCmd, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var resultLine = regexp.MustCompile(`(?m)^--- (PASS|FAIL|SKIP): (Test\w+)`)

// parseResults maps each top-level test in go test -v output to its
// result.
func parseResults(out string) map[string]string {
	results := map[string]string{}
	for _, m := range resultLine.FindAllStringSubmatch(out, -1) {
		results[m[2]] = m[1]
	}
	return results
}
