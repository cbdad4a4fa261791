//go:build linux

package transportbench

import (
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestNewTransportProducerError checks that a producer the kernel side
// cannot build fails newTransport for every transport, rather than
// leaving a transport with no producer and no error.
func TestNewTransportProducerError(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Case
	}{
		{"perf", Case{Perf, PerfReadInto}},
		{"ringbuf", Case{Ringbuf, Records}},
		{"queue", Case{Queue, LookupAndDelete}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 4-byte events are too short for the sequence number, so
			// every producer refuses them after the map and the reader
			// exist.
			cfg := Config{Case: tc.c, Size: 4}
			cfg.fill()
			tr, err := newTransport(cfg)
			if bpftest.Unavailable(err) {
				bpftest.SkipIfUnavailable(t, err, string(tc.c.Transport)+" maps")
			}
			if err == nil {
				if tr.producer == nil {
					t.Error("newTransport returned a transport without a producer and no error")
				} else {
					t.Error("newTransport accepted 4-byte events")
				}
				if cerr := tr.close(); cerr != nil {
					t.Error(cerr)
				}
				return
			}
			if tr != nil {
				t.Errorf("newTransport returned a transport with its error %v", err)
			}
			if !strings.Contains(err.Error(), "record size 4") {
				t.Errorf("error = %v, want the producer's record size error", err)
			}
		})
	}
}

// TestProduceKeepsRate drives produce with a producer whose every call
// takes 2 ms, twice the pacer's tick, as a test-run call does under TCG:
// the pacer must make up the bursts it missed and send the rate over
// the run, not a burst a call (half of it here).
func TestProduceKeepsRate(t *testing.T) {
	const (
		rate = 20_000 // runs a second: a burst of 20 a millisecond
		d    = 200 * time.Millisecond
	)
	var sent, calls int
	elapsed, err := produce(func(runs int) error {
		if runs < rate/1000 {
			t.Errorf("call %d asked for %d runs, fewer than a burst", calls, runs)
		}
		sent += runs
		calls++
		time.Sleep(2 * time.Millisecond)
		return nil
	}, 0, d, rate)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed < d {
		t.Errorf("produce returned after %v, before its %v", elapsed, d)
	}
	// What the rate allows over the time produce ran, the tick it
	// started included; a burst a call would send half of the lower bound
	// (a call takes two ticks), so it cannot pass.
	allowed := (int(elapsed/time.Millisecond) + 1) * rate / 1000
	if sent > allowed || sent < allowed*3/4 {
		t.Errorf("%d runs in %d calls over %v at %d a second: want between %d and %d",
			sent, calls, elapsed, rate, allowed*3/4, allowed)
	}
}
