//go:build linux

// Package cpustat measures the CPU time one thread spends, and pins
// goroutines to CPUs, for benchmarks that report what a consumer costs.
package cpustat

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Usage is CPU time spent in user space and in the kernel.
type Usage struct {
	User, System time.Duration
}

// Total is user plus system time.
func (u Usage) Total() time.Duration { return u.User + u.System }

// Sub returns u minus v.
func (u Usage) Sub(v Usage) Usage {
	return Usage{User: u.User - v.User, System: u.System - v.System}
}

// Thread returns the CPU time of the calling OS thread so far
// (getrusage(RUSAGE_THREAD)). Call it from a goroutine locked to its
// thread, or the numbers mix threads.
func Thread() (Usage, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return Usage{}, fmt.Errorf("getrusage: %w", err)
	}
	return Usage{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
	}, nil
}

// ThreadClock returns the CPU time of the calling OS thread so far, user
// and kernel together, from CLOCK_THREAD_CPUTIME_ID: exact to the
// nanosecond, where Thread's getrusage lags for a running thread by up to
// a scheduler tick (it reads the runtime the scheduler last booked, while
// the clock adds what the thread has run since). Use it to time
// intervals of milliseconds.
func ThreadClock() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %w", err)
	}
	return time.Duration(ts.Nano()), nil
}

// Process returns the CPU time of the whole process so far.
func Process() (Usage, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, fmt.Errorf("getrusage: %w", err)
	}
	return Usage{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
	}, nil
}

// Pin locks the calling goroutine to its OS thread and that thread to cpu.
// The returned function undoes both.
func Pin(cpu int) (unpin func(), err error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	return func() {
		unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}

// Go runs run on a new goroutine pinned to cpu for good: its thread ends
// with it, instead of carrying its affinity and timer slack back to Go's
// pool. Go returns once run is about to start, or with the error that
// kept it from starting; wait, called once, blocks until run returns and
// returns run's error, and the CPU time and wall time the thread spent in
// run.
func Go(cpu int, run func() error) (wait func() (Usage, time.Duration, error), err error) {
	type result struct {
		usage Usage
		wall  time.Duration
		err   error
	}
	ready := make(chan error, 1)
	done := make(chan result, 1)
	go func() {
		if _, err := Pin(cpu); err != nil { // never unpinned
			ready <- err
			return
		}
		before, err := Thread()
		start := time.Now()
		ready <- err
		if err != nil {
			return
		}
		runErr := run()
		after, err := Thread()
		done <- result{after.Sub(before), time.Since(start), errors.Join(runErr, err)}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return func() (Usage, time.Duration, error) {
		r := <-done
		return r.usage, r.wall, r.err
	}, nil
}

// PerSecond expresses d as milliseconds of CPU per second of wall time.
func PerSecond(d, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(d) / float64(time.Millisecond) / wall.Seconds()
}
