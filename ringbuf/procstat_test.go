//go:build linux

package ringbuf

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// The process-level helpers of the regression and stress tests: what the
// process holds outside Go's heap, read from /proc, so tests can check
// that readers give back every mapping and descriptor; the CPU time it
// burns; child processes for tests that may fault; producers that keep a
// ring busy.

// resourceCount is a snapshot of the mappings and descriptors this process
// holds.
type resourceCount struct {
	ringMappings int // lines of /proc/self/maps that map a BPF map
	fds          int // entries of /proc/self/fd
}

// countResources reads /proc/self/maps and /proc/self/fd. A BPF map's
// mmap'd regions show as anon_inode:bpf-map; in these tests only ring
// buffers are mmap'd (a ring is two lines: its consumer page and its
// producer page with the data area).
func countResources(tb testing.TB) resourceCount {
	tb.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		tb.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatal(err)
	}
	return resourceCount{
		ringMappings: bytes.Count(maps, []byte("anon_inode:bpf-map\n")),
		fds:          len(fds),
	}
}

// checkNoLeaks fails tb if the process holds more ring mappings or
// descriptors than it did at before.
func checkNoLeaks(tb testing.TB, before resourceCount, what string) {
	tb.Helper()
	after := countResources(tb)
	if after.ringMappings > before.ringMappings {
		tb.Errorf("%s: %d ring mappings left behind (%d before, %d after)",
			what, after.ringMappings-before.ringMappings, before.ringMappings, after.ringMappings)
	}
	if after.fds > before.fds {
		tb.Errorf("%s: %d file descriptors left behind (%d before, %d after)",
			what, after.fds-before.fds, before.fds, after.fds)
	}
}

// idleCPUBudget is the CPU time goroutines waiting on an idle ring may
// burn, per wall time: 5 % of one CPU. A spinning waiter takes nearly all
// of one; sleeping ones take next to nothing.
const idleCPUBudget = 0.05

// cpuUsedOver returns the CPU time (user and system) the whole process
// used while wall time passed.
func cpuUsedOver(tb testing.TB, wall time.Duration) (used, elapsed time.Duration) {
	tb.Helper()
	before, err := cpustat.Process()
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	time.Sleep(wall)
	after, err := cpustat.Process()
	if err != nil {
		tb.Fatal(err)
	}
	return after.Sub(before).Total(), time.Since(start)
}

// checkIdleCPU fails tb if the process uses more than idleCPUBudget of a
// CPU over half a second, with waiters (described by what) blocked on an
// idle ring.
func checkIdleCPU(tb testing.TB, what string) {
	tb.Helper()
	used, elapsed := cpuUsedOver(tb, 500*time.Millisecond)
	if share := used.Seconds() / elapsed.Seconds(); share > idleCPUBudget {
		tb.Errorf("%s on an idle ring: the process used %v of CPU in %v (%.0f %% of a CPU, budget %.0f %%)",
			what, used, elapsed.Round(time.Millisecond), 100*share, 100*idleCPUBudget)
	} else {
		tb.Logf("%s on an idle ring: %v of CPU in %v", what, used, elapsed.Round(time.Millisecond))
	}
}

// moreProcs gives the rest of the test at least four Ps. A producer in
// its test-run syscall keeps its P until sysmon takes it back,
// milliseconds later: with the two Ps of a two-CPU machine, the readers
// and closers of a test would take turns on the other one.
func moreProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// childEnv names the test that a re-executed test binary runs as a child.
const childEnv = "RINGBUF_TEST_CHILD"

// inChild runs body in a child process: the test binary run again for
// t's test alone, so that a fault (which kills the whole binary) fails t
// with the child's output instead of ending every test. In the child,
// inChild just runs body. t must be a top-level test.
func inChild(t *testing.T, timeout time.Duration, body func(t *testing.T)) {
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

// keepProducing runs every producer in bursts of 50 runs, on CPU 0, or on
// CPU 0 and CPU 1 with cpus 2, sleeping pause() between bursts if pause
// is not nil, until stop is called (or the test ends); stop returns when
// the producers have stopped. A full ring drops records: the producers
// count them.
func keepProducing(tb testing.TB, producers []*progs.Producer, cpus int, pause func() time.Duration) (stop func()) {
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
