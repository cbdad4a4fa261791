//go:build linux

package upstreamsuite

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Differ are upstream's tests, per package, that check a rule ours
// deliberately does not follow, each with the failure message that must
// appear in that test's output: they must fail, and exactly there.
//
// perf: v0.22's Reader reads a buffer only after a wakeup, so a record
// that arrived after the deadline or Flush ended a wait is held back until
// that error was returned. Ours looks at the buffers before it waits, as
// this module's ring buffer reader does (its Flush and deadline rules), so
// it returns such a record first.
var Differ = map[string]map[string]string{
	"perf": {
		"TestReaderSetDeadlinePendingEvents": "Expected os.ErrDeadlineExceeded from second Read",
		"TestReaderFlushPendingEvents":       "Expected ErrFlushed from second Read",
	},
	"ringbuf": {},
}

// firstTest is a test each suite must have run: a run that compiled
// nothing or skipped everything fails.
var firstTest = map[string]string{
	"perf":    "TestPerfReader",
	"ringbuf": "TestRingbufReader",
}

// TestUpstreamSuites runs cilium/ebpf's reader tests, from the module
// cache, against our ringbuf and perf packages (see the package doc).
// Every test but those in a Suite's Dropped and in Differ must pass.
func TestUpstreamSuites(t *testing.T) {
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
	for _, s := range Suites {
		t.Run(s.Package, func(t *testing.T) {
			out, err := goOutput(t, goEnv, dir, goCmd, "test", "-count=1", "-v", "./"+s.Package+"/")
			checkResults(t, out, err, firstTest[s.Package], Differ[s.Package])
		})
	}
}

// checkResults checks one suite's go test -v output.
func checkResults(t *testing.T, out string, err error, first string, differ map[string]string) {
	t.Helper()
	results := parseResults(out)
	if len(results) == 0 {
		t.Fatalf("no test ran (%v):\n%s", err, out)
	}
	if _, ok := results[first]; !ok {
		t.Fatalf("%s did not run:\n%s", first, out)
	}
	var names []string
	for name := range results {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		result := results[name]
		want, differs := differ[name]
		section := testOutput(out, name)
		switch {
		case differs && result == "FAIL" && strings.Contains(section, want):
			t.Logf("%s: FAIL, as expected (%s)", name, want)
		case differs:
			t.Errorf("%s: %s, want a FAIL at %q; its output:\n%s", name, result, want, section)
		case result == "SKIP":
			t.Errorf("%s skipped; its output:\n%s", name, section)
		case result != "PASS":
			t.Errorf("%s: %s; its output:\n%s", name, result, section)
		default:
			t.Logf("%s: PASS", name)
		}
	}
	for name := range differ {
		if _, ok := results[name]; !ok {
			t.Errorf("%s, expected to fail, did not run", name)
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

// testOutput is what go test -v printed for the top-level test name, from
// its "=== RUN" line to its result line; upstream's reader tests do not
// run in parallel, so nothing else is printed in between.
func testOutput(out, name string) string {
	start := strings.Index(out, "=== RUN   "+name+"\n")
	if start < 0 {
		return ""
	}
	rest := out[start:]
	end := regexp.MustCompile(`(?m)^--- (PASS|FAIL|SKIP): ` + regexp.QuoteMeta(name) + ` `).FindStringIndex(rest)
	if end == nil {
		return rest
	}
	return rest[:end[1]]
}
