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
// the pacer must make up the bursts it missed, so that each call brings
// it to the rate at the moment the call starts, not a burst a call (half
// of it here). The count is held against the last call's start, not
// produce's elapsed time: a sleep that a busy host stretches delays the
// next call, and the rate owes nothing for that wait.
func TestProduceKeepsRate(t *testing.T) {
	const (
		rate  = 20_000 // runs a second: a burst of 20 a millisecond
		burst = rate / 1000
		d     = 200 * time.Millisecond
	)
	var sent, calls int
	elapsed, lastBurst, err := produce(func(runs int) error {
		if runs < burst {
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
	if elapsed < d || lastBurst >= d || lastBurst > elapsed {
		t.Errorf("produce ran %v, its last call at %v, for %v", elapsed, lastBurst, d)
	}
	if calls < 2 {
		t.Fatalf("%d calls in %v: nothing to catch up", calls, elapsed)
	}
	// Due at the last call: every tick up to its start, that tick
	// included; one burst more would be ahead of the pace.
	due := (int(lastBurst/time.Millisecond) + 1) * burst
	if sent != due {
		t.Errorf("%d runs in %d calls, the last at %v, at %d a second: want %d",
			sent, calls, lastBurst, rate, due)
	}
}
