//go:build linux

package xdpbench

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMonotonicNowIsClockMonotonic brackets monotonicNow between two
// clock_gettime(CLOCK_MONOTONIC) system calls.
func TestMonotonicNowIsClockMonotonic(t *testing.T) {
	var before, after unix.Timespec
	for range 10 {
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &before); err != nil {
			t.Fatal(err)
		}
		now := monotonicNow()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &after); err != nil {
			t.Fatal(err)
		}
		if now < before.Nano() || now > after.Nano() {
			t.Fatalf("monotonicNow %d outside CLOCK_MONOTONIC [%d, %d]", now, before.Nano(), after.Nano())
		}
	}
}
