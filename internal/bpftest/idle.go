//go:build linux

package bpftest

import (
	"errors"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
)

// IdleCPUBudget is the CPU time goroutines waiting on idle buffers may
// burn, per wall time: 5 % of one CPU. A spinning waiter takes nearly all
// of one; sleeping ones take next to nothing.
const IdleCPUBudget = 0.05

// CPUUsedOver returns the CPU time (user and system) the whole process
// used while wall time passed, and the wall time that did pass.
func CPUUsedOver(tb testing.TB, wall time.Duration) (used, elapsed time.Duration) {
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

// CheckIdleCPU fails tb if the process uses more than [IdleCPUBudget] of
// a CPU over half a second, while what (e.g. "two Records loops on an
// idle ring") waits.
func CheckIdleCPU(tb testing.TB, what string) {
	tb.Helper()
	used, elapsed := CPUUsedOver(tb, 500*time.Millisecond)
	if share := used.Seconds() / elapsed.Seconds(); share > IdleCPUBudget {
		tb.Errorf("%s: the process used %v of CPU in %v (%.0f %% of a CPU, budget %.0f %%)",
			what, used, elapsed.Round(time.Millisecond), 100*share, 100*IdleCPUBudget)
	} else {
		tb.Logf("%s: %v of CPU in %v", what, used, elapsed.Round(time.Millisecond))
	}
}

// CheckIdleWaiters checks waiters goroutines that wait on idle buffers
// and send the error that ends each on ended: none ends before closeIt is
// called, nor while the process's CPU time is measured ([CheckIdleCPU]);
// closeIt returns within 10 s, and then every waiter ends within 5 s with
// want (by [errors.Is]; nil for waiters that end with nil once closed).
// what names the waiters in failures.
func CheckIdleWaiters(t *testing.T, what string, waiters int, ended <-chan error, closeIt func() error, want error) {
	t.Helper()
	StillWaiting(t, ended, 100*time.Millisecond, what+", idle,") // the wake-ups settle
	CheckIdleCPU(t, what+" on idle buffers")
	StillWaiting(t, ended, 0, what+", while CPU was measured,")
	closed := make(chan error, 1)
	go func() { closed <- closeIt() }()
	if err := Receive(t, closed, 10*time.Second, "Close"); err != nil {
		t.Errorf("Close: %v", err)
	}
	for range waiters {
		if err := Receive(t, ended, 5*time.Second, what+", after Close,"); !errors.Is(err, want) {
			t.Errorf("%s: one ended with %v, want %v", what, err, want)
		}
	}
}
