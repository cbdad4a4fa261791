//go:build linux

package bench

import (
	"runtime"
	"slices"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/progs"
)

// ringsKnobs are BenchmarkRings' settings, from the environment:
//
//	RINGS_SIZES      event sizes in bytes (16,128,1024)
//	RINGS_PRODUCERS  how many CPUs produce at once (1, 2 and every CPU,
//	                 as far as there are CPUs); make bench-rings' model
//	                 needs 1 and 2
//	RINGS_RING       bytes of all rings together: the shared ring's size,
//	                 split over the CPUs for per-CPU rings (16777216)
type ringsKnobs struct {
	sizes, producers []int
	ring             int
}

func ringsEnv(t testing.TB) ringsKnobs {
	t.Helper()
	cpus := runtime.NumCPU()
	var producers []int
	for _, n := range []int{1, 2, cpus} {
		if n <= cpus && !slices.Contains(producers, n) {
			producers = append(producers, n)
		}
	}
	return ringsKnobs{
		sizes:     xdpInts(t, "RINGS_SIZES", []int{16, 128, 1024}),
		producers: xdpInts(t, "RINGS_PRODUCERS", producers),
		ring:      xdpInt(t, "RINGS_RING", 16<<20),
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
