//go:build linux

package bench

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/transportbench"
)

// k2uOpenFiles counts this process's open file descriptors.
func k2uOpenFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd to count descriptors: %v", err)
	}
	return len(fds)
}

// k2uCheckNoLeak fails if the test leaves descriptors (maps, programs,
// perf events, epoll) open: registered first, it runs after every other
// cleanup.
func k2uCheckNoLeak(t *testing.T) {
	t.Helper()
	before := k2uOpenFiles(t)
	t.Cleanup(func() {
		if after := k2uOpenFiles(t); after > before {
			t.Errorf("%d descriptors open before, %d after", before, after)
		}
	})
}

// TestK2UProducerRig produces two loops of every producer row and checks
// that Drain finds every numbered event, well formed, in the buffer.
func TestK2UProducerRig(t *testing.T) {
	k2uSkipUnlessAvailable(t)
	k2uCheckNoLeak(t)
	for _, c := range transportbench.ProducerCases() {
		for _, size := range []int{16, 84, 4096} {
			t.Run(string(c.Helper)+"/"+c.Flags+"/"+k2uSizeName(size), func(t *testing.T) {
				rig, err := transportbench.NewProducerRig(c, size)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := rig.Close(); err != nil {
						t.Error(err)
					}
				})
				if rig.Chunk < 1000 {
					t.Fatalf("only %d runs fit between drains", rig.Chunk)
				}
				for range 2 {
					if err := rig.Produce(1000); err != nil {
						t.Fatal(err)
					}
					if err := rig.Drain(); err != nil {
						t.Fatal(err)
					}
				}
				produced, dropped, err := rig.Producer.Counts()
				wantDropped := uint64(0)
				if c.Refused() {
					wantDropped = produced
				}
				if err != nil || produced < 2000 || dropped != wantDropped {
					t.Errorf("produced %d, dropped %d (%v); want at least 2000, %d dropped", produced, dropped, err, wantDropped)
				}
				if err := rig.RunEmpty(10); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestK2UEndToEnd runs every end-to-end row for a moment with every byte
// of each event patterned and checked, and checks the accounting: each
// event delivered once or counted lost by the program, perf's own lost
// count within the program's, and a consumer that spent some CPU.
func TestK2UEndToEnd(t *testing.T) {
	k2uSkipUnlessAvailable(t)
	k2uCheckNoLeak(t)
	for _, c := range transportbench.EndToEndCases() {
		for _, rate := range []int{0, 20000} {
			t.Run(string(c.Transport)+"/"+string(c.Reader)+"/"+k2uRateName(rate), func(t *testing.T) {
				k2uCheckEndToEnd(t, transportbench.Config{
					Case: c, Size: 84, Duration: 100 * time.Millisecond, Rate: rate,
					ProducerCPU: -1, ConsumerCPU: -1, Pattern: true,
				})
			})
		}
	}
}

func k2uCheckEndToEnd(t *testing.T, cfg transportbench.Config) {
	t.Helper()
	res, err := transportbench.Run(cfg)
	if errors.Is(err, transportbench.ErrNoQueueBatch) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.SeqErr != nil || res.Malformed > 0 {
		t.Errorf("sequence check: %v; %d malformed", res.SeqErr, res.Malformed)
	}
	if res.Produced == 0 || res.Delivered == 0 || res.Delivered+res.Dropped != res.Produced {
		t.Errorf("produced %d, delivered %d, dropped %d", res.Produced, res.Delivered, res.Dropped)
	}
	if res.PerfLost > res.Dropped {
		t.Errorf("perf reported %d lost, more than the %d the program counted", res.PerfLost, res.Dropped)
	}
	if cfg.Rate > 0 {
		k2uCheckPace(t, cfg, res)
	}
	if res.Consumer.Total() <= 0 || res.ConsumerWall < cfg.Duration {
		t.Errorf("consumer CPU %v over %v", res.Consumer, res.ConsumerWall)
	}
	if m := res.Metrics(); len(m) == 0 || m[0].Unit != "events/s" || m[0].Value <= 0 {
		t.Errorf("metrics %v", m)
	}
}

// k2uCheckPace checks a paced run against the time its producer really
// ran: when its last burst went out (Result.LastBurst) it had sent what
// was due by then, a burst a millisecond. Under TCG, with the consumer on
// the same CPU, the producer may get to call only a few times in
// cfg.Duration, and the wall clock would blame the pacer for the
// emulator's speed. The count is the program's own; test-run restarts a
// call that a signal interrupts (progs.RunTimes runs at least the count
// asked), so up to twice what was due passes. A pacer that does not catch
// up falls short of it on a slow CPU; one that runs flat out sends
// thousands in its first call, due 20.
func k2uCheckPace(t *testing.T, cfg transportbench.Config, res *transportbench.Result) {
	t.Helper()
	if res.LastBurst >= cfg.Duration {
		t.Errorf("the producer's last burst went out at %v, after its %v", res.LastBurst, cfg.Duration)
	}
	burst := uint64(max(cfg.Rate/1000, 1))
	// The tick the last burst went out in counts whole.
	due := (uint64(res.LastBurst/time.Millisecond) + 1) * burst
	if res.Produced < due || res.Produced > 2*due {
		t.Errorf("produced %d at %d/s, the last burst at %v of %v (producer ran %v): want %d, everything due then",
			res.Produced, cfg.Rate, res.LastBurst, cfg.Duration, res.Elapsed, due)
	}
}

// TestK2URunFailsCleanly asks for a reader the transport lacks and
// checks that Run fails and leaves nothing open.
func TestK2URunFailsCleanly(t *testing.T) {
	k2uSkipUnlessAvailable(t)
	k2uCheckNoLeak(t)
	for _, c := range []transportbench.Case{
		{Transport: transportbench.Ringbuf, Reader: transportbench.LookupAndDelete},
		{Transport: transportbench.Queue, Reader: transportbench.Records},
		{Transport: "carrier-pigeon", Reader: transportbench.Records},
	} {
		if _, err := transportbench.Run(transportbench.Config{Case: c, Size: 80, Duration: time.Millisecond}); err == nil {
			t.Errorf("%v: no error", c)
		}
	}
}
