//go:build linux

package epoll

import (
	"math"
	"testing"
	"time"
)

// TestWaitMsec: epoll_wait's timeout (a C int of milliseconds) waits at
// least as long as asked, and a long deadline never turns into no limit.
func TestWaitMsec(t *testing.T) {
	for _, timeout := range []time.Duration{0, 1, time.Millisecond, time.Hour,
		25 * 24 * time.Hour, 60 * 24 * time.Hour, math.MaxInt64} {
		msec := waitMsec(timeout)
		if msec < 0 || msec > math.MaxInt32 {
			t.Errorf("waitMsec(%v) = %d, outside a C int's 0..2^31-1", timeout, msec)
		}
		if time.Duration(msec)*time.Millisecond < min(timeout, math.MaxInt32*time.Millisecond) {
			t.Errorf("waitMsec(%v) = %d ms, shorter than asked", timeout, msec)
		}
	}
	if msec := waitMsec(-1); msec != -1 {
		t.Errorf("waitMsec(-1) = %d, want -1 (no limit)", msec)
	}
}
