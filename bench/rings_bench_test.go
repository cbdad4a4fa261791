//go:build linux

package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/ringmodel"
	"github.com/ebpf-zc/ebpf/internal/ringsbench"
)

// BenchmarkRings measures what ring buffer producers on several CPUs at
// once cost each other, writing into one shared ring or into a ring per
// CPU (an array of maps indexed by bpf_get_smp_processor_id), for each
// event size and wake-up flag. An op is one event placed by every
// producer; ns/event is a producer thread's CPU time per event, spinning
// for the shared ring's lock included (the contention), time the thread
// was not running excluded; Mevents/s is what all of them place together
// per second of that time, producers/(ns/event), and wall-Mevents/s the
// same by the wall clock, which on a loaded machine counts the time other
// processes held the CPUs; lost-% the share the program could not
// place. Nobody reads while the producers run: the rings are drained
// between loops with the timer stopped, and a row fails unless every
// event was delivered exactly once, into its CPU's ring with per-CPU
// rings, or counted as lost. Each CPU numbers its own events, so the
// producers share nothing but, with the shared layout, the ring.
func BenchmarkRings(b *testing.B) {
	k2uSkipUnlessAvailable(b)
	k := ringsEnv(b)
	for _, layout := range []ringsbench.Layout{ringsbench.Shared, ringsbench.PerCPU} {
		for _, producers := range k.producers {
			for _, size := range k.sizes {
				for _, f := range ringsFlags {
					cfg := ringsbench.Config{Layout: layout, Producers: producers, Size: size, Flags: f.flags, RingBytes: k.ring}
					b.Run(fmt.Sprintf("layout=%s/producers=%d/size=%d/flags=%s", layout, producers, size, f.name), func(b *testing.B) {
						ringsRow(b, cfg)
					})
				}
			}
		}
	}
}

func ringsRow(b *testing.B, cfg ringsbench.Config) {
	rig, err := ringsbench.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := rig.Close(); err != nil {
			b.Error(err)
		}
	}()
	var busy time.Duration
	produce := func(n int) error {
		took, err := rig.Produce(n)
		busy += took
		return err
	}
	timedChunks(b, rig.Chunk, produce, func(int) error { return rig.Drain() })
	produced, dropped, err := rig.Counts()
	if err != nil {
		b.Fatal(err)
	}
	perEvent := float64(busy.Nanoseconds()) / float64(produced)
	b.ReportMetric(perEvent, ringmodel.UnitPerEvent)
	// The rate the model projects: each producer on a CPU of its own.
	b.ReportMetric(float64(cfg.Producers)/perEvent*1e3, ringmodel.UnitRate)
	// What the wall clock saw, other processes on the CPUs included.
	b.ReportMetric(float64(produced)/b.Elapsed().Seconds()/1e6, "wall-Mevents/s")
	b.ReportMetric(100*float64(dropped)/float64(produced), "lost-%")
}

// ringsKnobs are BenchmarkRings' settings, from the environment
// (RINGS_*, internal/benchfamily/rings.go).
type ringsKnobs struct {
	sizes, producers []int
	ring             int
}

func ringsEnv(t testing.TB) ringsKnobs {
	t.Helper()
	return ringsKnobs{
		sizes:     knobInts(t, "RINGS_SIZES"),
		producers: knobInts(t, "RINGS_PRODUCERS"),
		ring:      knobInt(t, "RINGS_RING"),
	}
}

// ringsFlags are the wake-up policies compared, by the names the rows use.
var ringsFlags = []struct {
	name  string
	flags uint64
}{
	{"0", 0},
	{"no_wakeup", progs.NoWakeup},
}
