//go:build linux

package benchfamily

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/drainbench/ours"
	"github.com/ebpf-zc/ebpf/internal/perfdrain"
	"github.com/ebpf-zc/ebpf/internal/transportbench"
	"github.com/ebpf-zc/ebpf/internal/xdpbench"
)

// TestRigNames checks the names and counts the descriptions hold of
// their rigs, written out so that the descriptions import no rig,
// against the rigs themselves.
func TestRigNames(t *testing.T) {
	var oursNames, perfNames []string
	for _, m := range ours.Modes {
		oursNames = append(oursNames, m.Name)
	}
	for _, m := range perfdrain.Modes {
		perfNames = append(perfNames, m.Name)
	}
	if !slices.Equal(drainOurs, oursNames) {
		t.Errorf("drainOurs %q, the rig's %q", drainOurs, oursNames)
	}
	if !slices.Equal(perfModeNames, perfNames) {
		t.Errorf("perfModeNames %q, the rig's %q", perfModeNames, perfNames)
	}
	for _, tc := range []struct {
		name      string
		have, rig int
	}{
		{"k2uProducerCases", k2uProducerCases, len(transportbench.ProducerCases())},
		{"k2uReaderCases", k2uReaderCases, len(transportbench.EndToEndCases())},
		{"xdpStrategies", xdpStrategies, len(xdpbench.Strategies())},
	} {
		if tc.have != tc.rig {
			t.Errorf("%s = %d, the rig has %d", tc.name, tc.have, tc.rig)
		}
	}
}

// TestPlanRead checks BenchmarkRead's plan against its loops: sizes from
// RINGBUF_BENCH_SIZES, our modes and the five references, two touches,
// a result a round.
func TestPlanRead(t *testing.T) {
	t.Setenv("RINGBUF_BENCH_SIZES", "16,4096")
	f, err := Named("ringbuf")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := f.Plan(true, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := "BenchmarkRead: " + itoa(2*(len(ours.Modes)+5)*2*6) + " results (2 sizes x " + itoa(len(ours.Modes)+5) + " modes x 2 touches x 6 runs)"
	if !strings.HasPrefix(pl.Lines[0], want) {
		t.Errorf("plan %q, want it to start %q", pl.Lines[0], want)
	}
	if pl.Cost <= 0 {
		t.Errorf("cost %v", pl.Cost)
	}
}

// TestPlanPerfRead checks that perf's BenchmarkRead, named like
// ringbuf's, is planned by its own knob and modes.
func TestPlanPerfRead(t *testing.T) {
	t.Setenv("RINGBUF_BENCH_SIZES", "16")
	t.Setenv("PERF_BENCH_SIZES", "16,64,4096")
	f, err := Named("perf")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := f.Plan(false, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * len(perfdrain.Modes) * 2 * 2; pl.Results != want {
		t.Errorf("%d results planned, want %d", pl.Results, want)
	}
}

// TestRoundsAndBenchtime checks the order in which the count and
// -benchtime knobs apply: the family's own, then COUNT and BENCHTIME,
// then the defaults, FULL=1's where it has one.
func TestRoundsAndBenchtime(t *testing.T) {
	rings, _ := Named("rings")
	perf, _ := Named("perf")
	sockfilter, _ := Named("sockfilter")
	rounds := func(f *Family) int {
		t.Helper()
		n, err := f.RoundsNow()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Setenv("COUNT", "")
	t.Setenv("FULL", "")
	t.Setenv("RINGS_COUNT", "")
	if rounds(rings) != 6 || rounds(sockfilter) != 6 {
		t.Errorf("defaults: %d, %d rounds", rounds(rings), rounds(sockfilter))
	}
	t.Setenv("FULL", "1")
	if rounds(rings) != 10 || rounds(sockfilter) != 6 {
		t.Errorf("FULL=1: %d, %d rounds", rounds(rings), rounds(sockfilter))
	}
	t.Setenv("COUNT", "2")
	t.Setenv("RINGS_COUNT", "3")
	if rounds(rings) != 3 || rounds(sockfilter) != 2 {
		t.Errorf("COUNT=2 RINGS_COUNT=3: %d, %d rounds", rounds(rings), rounds(sockfilter))
	}
	t.Setenv("PERF_BENCHTIME", "")
	t.Setenv("BENCHTIME", "")
	if bt, _ := perf.Runs[0].BenchtimeNow(); bt != "100ms" {
		t.Errorf("perf's default -benchtime %q", bt)
	}
	t.Setenv("BENCHTIME", "10ms")
	if bt, _ := perf.Runs[0].BenchtimeNow(); bt != "10ms" {
		t.Errorf("BENCHTIME=10ms: perf's -benchtime %q", bt)
	}
	if bt, _ := sockfilter.Runs[0].BenchtimeNow(); bt != "1x" {
		t.Errorf("BENCHTIME=10ms: sockfilter's -benchtime %q, want its fixed 1x", bt)
	}
	t.Setenv("PERF_BENCHTIME", "20ms")
	if bt, _ := perf.Runs[0].BenchtimeNow(); bt != "20ms" {
		t.Errorf("PERF_BENCHTIME=20ms: perf's -benchtime %q", bt)
	}
}

// TestTargetValues checks that make's values and aliases reach the
// environment the runs and the plan see, and that a value given wins.
func TestTargetValues(t *testing.T) {
	f, _ := Named("ringbuf")
	for _, env := range []string{"RINGBUF_BENCH_SIZES", "RINGBUF_BENCH_RING", "SIZES", "RING", "FULL"} {
		t.Setenv(env, "")
		os.Unsetenv(env)
	}
	if err := f.SetTargetValues(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("RINGBUF_BENCH_SIZES"); got != "16,128,1024,4096" {
		t.Errorf("make bench's sizes %q", got)
	}
	os.Unsetenv("RINGBUF_BENCH_SIZES")
	t.Setenv("SIZES", "sweep")
	t.Setenv("FULL", "1")
	t.Setenv("RINGBUF_BENCH_RING", "4096")
	if err := f.SetTargetValues(); err != nil {
		t.Fatal(err)
	}
	if got, ring := os.Getenv("RINGBUF_BENCH_SIZES"), os.Getenv("RINGBUF_BENCH_RING"); got != "sweep" || ring != "4096" {
		t.Errorf("SIZES=sweep RINGBUF_BENCH_RING=4096: sizes %q, ring %q", got, ring)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
