//go:build linux

package ringbuf

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
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
