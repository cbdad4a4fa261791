//go:build linux

package perf

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time the whole process has used.
func processCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// openResources counts the process's fds and its perf buffer mappings.
func openResources(tb testing.TB) (fds, mappings int) {
	tb.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		tb.Fatal(err)
	}
	return len(entries), bytes.Count(maps, []byte("anon_inode:[perf_event]"))
}

// TestIdleWaitersAndClose: three waiters (two Records loops, a ReadInto
// loop) are woken by records and by a deadline set and removed, then wait
// on idle buffers: the process must stay under 5 % of a CPU. Close ends
// them with ErrClosed and gives back every fd and mapping the reader had.
func TestIdleWaitersAndClose(t *testing.T) {
	m := newEventArray(t)
	p := newProducer(t, m, 32)
	fdsBefore, mapsBefore := openResources(t)
	r, err := NewReader(m, 1<<16)
	skipIfNoBPF(t, err)
	if fds, maps := openResources(t); fds <= fdsBefore || maps <= mapsBefore {
		t.Fatalf("a new Reader holds %d fds and %d perf mappings, before %d and %d: the test sees nothing",
			fds, maps, fdsBefore, mapsBefore)
	}

	ended := idleWaiters(r)
	time.Sleep(20 * time.Millisecond)
	for _, cpu := range testCPUs(t) {
		runOn(t, p, cpu, 100)
	}
	r.SetDeadline(time.Now().Add(time.Hour))
	r.SetDeadline(time.Time{})
	checkIdleWaiters(t, r, ended)
	if fds, maps := openResources(t); fds > fdsBefore || maps > mapsBefore {
		t.Errorf("after Close: %d fds and %d perf mappings, before %d and %d", fds, maps, fdsBefore, mapsBefore)
	}
}

// idleWaiters starts the three waiters of the idle tests on r, two
// Records loops and a ReadInto loop, and returns where each sends the
// error that ends it.
func idleWaiters(r *Reader) chan error {
	ended := make(chan error, 3)
	for range 2 {
		go func() {
			for _, err := range r.Records() {
				if err != nil {
					ended <- err
					return
				}
			}
			ended <- errors.New("loop ended without an error")
		}()
	}
	go func() {
		var rec Record
		for {
			if err := r.ReadInto(&rec); err != nil {
				ended <- err
				return
			}
		}
	}()
	return ended
}

// checkIdleWaiters fails t if idleWaiters' three waiters, with nothing to
// read, use over 5 % of a CPU, or end before Close, or end after Close
// with anything but ErrClosed.
func checkIdleWaiters(t *testing.T, r *Reader, ended chan error) {
	t.Helper()
	time.Sleep(50 * time.Millisecond) // the wake-ups settle
	start, cpu := time.Now(), processCPU(t)
	time.Sleep(500 * time.Millisecond)
	used, wall := processCPU(t)-cpu, time.Since(start)
	t.Logf("three waiters on idle buffers: %v of CPU in %v", used, wall)
	if used > wall/20 {
		t.Errorf("three idle waiters used %v of CPU in %v (budget 5 %%)", used, wall)
	}
	select {
	case err := <-ended:
		t.Fatalf("a waiter ended while idle: %v", err)
	default:
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-ended:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("a waiter ended with %v, want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a waiter did not end after Close")
		}
	}
}
