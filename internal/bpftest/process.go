//go:build linux

package bpftest

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The process-level helpers of the tests of ringbuf and perf: child
// processes for tests that may fault, and enough Ps for the producers and
// the readers of a stress test.

// childEnv names the test that a re-executed test binary runs as a child.
const childEnv = "BPFTEST_CHILD"

// InChild runs body in a child process: the test binary run again for
// t's test alone, so that a fault (which kills the whole binary) fails t
// with the child's output instead of ending every test. In the child,
// InChild just runs body. t must be a top-level test.
func InChild(t *testing.T, timeout time.Duration, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		body(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0],
		"-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	output := string(out)
	switch {
	case ctx.Err() != nil:
		t.Fatalf("child process killed after %v:\n%s", timeout, tail(output, 60))
	case strings.Contains(output, "--- SKIP: "+t.Name()):
		t.Skipf("child process skipped:\n%s", tail(output, 10))
	case err != nil:
		t.Fatalf("child process: %v after %v:\n%s", err, time.Since(start).Round(time.Millisecond), excerpt(output))
	case !strings.Contains(output, "--- PASS: "+t.Name()):
		t.Fatalf("child process did not pass %s:\n%s", t.Name(), tail(output, 60))
	}
	t.Logf("child process passed in %v:\n%s", time.Since(start).Round(time.Millisecond), tail(output, 20))
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// excerpt returns what matters of a failed child's output: the first
// fatal error, panic or data race with its stack, if there is one, and
// the last lines.
func excerpt(output string) string {
	first := -1
	for _, mark := range []string{"fatal error:", "panic:", "SIGSEGV", "unexpected fault", "WARNING: DATA RACE"} {
		if i := strings.Index(output, mark); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return tail(output, 60)
	}
	lines := strings.Split(output[strings.LastIndex(output[:first], "\n")+1:], "\n")
	return strings.Join(lines[:min(len(lines), 40)], "\n") + "\n...\n" + tail(output, 10)
}

// MoreProcs gives the rest of t at least four Ps. A producer in its
// test-run syscall keeps its P until sysmon takes it back, milliseconds
// later: with the two Ps of a two-CPU machine, the readers and closers of
// a test would take turns on the other one.
func MoreProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}
