//go:build linux

package cpustat

import (
	"testing"
	"time"
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
	// Spin for 50 ms of wall time: the thread must be charged for most of it.
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after, err := Thread()
	if err != nil {
		t.Fatal(err)
	}
	if used := after.Sub(before).Total(); used < 20*time.Millisecond {
		t.Errorf("a 50 ms spin was charged %v (x=%d)", used, x)
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
