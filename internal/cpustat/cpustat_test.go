//go:build linux

package cpustat

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestThreadCountsOwnWork(t *testing.T) {
	unpin, err := Pin(0)
	if err != nil {
		t.Fatal(err)
	}
	defer unpin()
	before, err := Thread()
	if err != nil {
		t.Fatal(err)
	}
	// Spin for 50 ms of the thread's CPU time, by its exact clock: a
	// loaded machine stretches the wall time but not what is charged.
	// getrusage may lag by a scheduler tick (up to 10 ms at HZ=100).
	spinStart, err := ThreadClock()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for now := spinStart; now-spinStart < 50*time.Millisecond; x++ {
		if now, err = ThreadClock(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := Thread()
	if err != nil {
		t.Fatal(err)
	}
	if used := after.Sub(before).Total(); used < 30*time.Millisecond {
		t.Errorf("a spin of 50 ms of CPU was charged %v (x=%d)", used, x)
	}
}

func TestPerSecond(t *testing.T) {
	for _, tc := range []struct {
		d, wall time.Duration
		want    float64
	}{
		{500 * time.Millisecond, time.Second, 500},
		{time.Second, 2 * time.Second, 500},
		{time.Second, 0, 0},
	} {
		if got := PerSecond(tc.d, tc.wall); got != tc.want {
			t.Errorf("PerSecond(%v, %v) = %v, want %v", tc.d, tc.wall, got, tc.want)
		}
	}
}

// TestThreadClock checks that the thread clock counts the thread's own
// work, never more than the wall time that passed, and not its sleep. It
// spins until the clock, not the wall, says 20 ms went by, so a loaded
// machine slows it down but does not fail it.
func TestThreadClock(t *testing.T) {
	unpin, err := Pin(0)
	if err != nil {
		t.Fatal(err)
	}
	defer unpin()
	clock := func() time.Duration {
		t.Helper()
		d, err := ThreadClock()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The wall-clock window encloses the CPU-time one; the two clocks
	// come from different sources, so allow them 1 % of drift.
	wallStart := time.Now()
	start := clock()
	for clock()-start < 20*time.Millisecond {
		if time.Since(wallStart) > 10*time.Second {
			t.Fatalf("10 s of spinning charged %v", clock()-start)
		}
	}
	used := clock() - start
	wall := time.Since(wallStart)
	if used > wall+wall/100 {
		t.Errorf("charged %v in %v of wall time", used, wall)
	}
	// A sleep is charged what the runtime spins before it parks the
	// thread: under TCG (the VM matrix) 8.7 ms of a 20 ms sleep. A clock
	// that counted the sleep would charge all of it.
	before := clock()
	time.Sleep(100 * time.Millisecond)
	if slept := clock() - before; slept > 20*time.Millisecond {
		t.Errorf("a 100 ms sleep was charged %v", slept)
	}
}

// TestGo: run runs pinned to the CPU asked for, its error comes back
// from wait, and so does the CPU time it spent, not the time it slept
// (but for what Go's runtime spins before it parks: a fifth of the sleep
// at most, see TestThreadClock).
func TestGo(t *testing.T) {
	cpu := runtime.NumCPU() - 1
	errRun := errors.New("run's error")
	var pinned unix.CPUSet
	wait, err := Go(cpu, func() error {
		if err := unix.SchedGetaffinity(0, &pinned); err != nil {
			return err
		}
		// 30 ms of this thread's CPU time, then a sleep that costs none.
		start, err := ThreadClock()
		for now := start; err == nil && now-start < 30*time.Millisecond; {
			now, err = ThreadClock()
		}
		time.Sleep(100 * time.Millisecond)
		return errors.Join(err, errRun)
	})
	if err != nil {
		t.Fatal(err)
	}
	usage, wall, err := wait()
	if !errors.Is(err, errRun) {
		t.Errorf("wait returned %v, want run's error", err)
	}
	if pinned.Count() != 1 || !pinned.IsSet(cpu) {
		t.Errorf("run's thread may run on %d CPUs, CPU %d among them: %v; want CPU %d alone",
			pinned.Count(), cpu, pinned.IsSet(cpu), cpu)
	}
	// getrusage may lag by a scheduler tick (10 ms at HZ=100).
	if total := usage.Total(); total < 15*time.Millisecond || total > wall-50*time.Millisecond {
		t.Errorf("run used %v of CPU over %v: want its 30 ms of spinning, not its 100 ms of sleep", total, wall)
	}
	if _, err := Go(runtime.NumCPU()+64, func() error { return nil }); err == nil {
		t.Error("Go pinned a goroutine to a CPU that does not exist")
	}
}
