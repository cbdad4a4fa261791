//go:build linux

package bpftest

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
)

// The process-level helpers of the stress tests of ringbuf and perf:
// child processes for tests that may fault, producers that keep a buffer
// busy.

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

// Producer is a program that produces records each time it runs, as
// internal/progs builds them.
type Producer interface {
	Run(times int) error
}

// KeepProducing runs every producer in bursts of 50 runs, on CPU 0, or on
// CPU 0 and CPU 1 with cpus 2, sleeping pause() between bursts if pause
// is not nil, until stop is called (or the test ends); stop returns when
// the producers have stopped. A full ring drops records: the producers
// count them.
func KeepProducing[P Producer](tb testing.TB, producers []P, cpus int, pause func() time.Duration) (stop func()) {
	tb.Helper()
	done := make(chan struct{})
	var producing sync.WaitGroup
	for _, p := range producers {
		for cpu := range cpus {
			producing.Add(1)
			go func() {
				defer producing.Done()
				if unpin, err := cpustat.Pin(cpu); err == nil {
					defer unpin()
				}
				for {
					select {
					case <-done:
						return
					default:
					}
					if err := p.Run(50); err != nil {
						tb.Error(err)
						return
					}
					if pause != nil {
						time.Sleep(pause())
					}
				}
			}()
		}
	}
	var once sync.Once
	stop = func() {
		once.Do(func() { close(done) })
		producing.Wait()
	}
	tb.Cleanup(stop)
	return stop
}
