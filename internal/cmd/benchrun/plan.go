//go:build linux

package main

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchprogress"
	"github.com/ebpf-zc/ebpf/internal/drainbench"
	"github.com/ebpf-zc/ebpf/internal/drainbench/ours"
	"github.com/ebpf-zc/ebpf/internal/perfdrain"
	"github.com/ebpf-zc/ebpf/internal/transportbench"
	"github.com/ebpf-zc/ebpf/internal/xdpbench"
)

// A family is one top-level benchmark of one package (perf and ringbuf
// both have a BenchmarkRead): how many leaves it runs under the settings
// it reads from the environment, and what one result of it cost on the
// reference host (a 2-vCPU KVM guest on an AMD EPYC), from
// the wall time of the committed reference runs under testdata/.
type family struct {
	pkg  string // its directory in the module: ringbuf
	name string
	// leaves says how many sub-benchmarks one run of the family has and
	// how they multiply, for the announcement.
	leaves func(p goTestArgs) (int, string)
	// cost is the wall time of one result, setup and ramp-up included.
	cost func(p goTestArgs) time.Duration
}

// goTestArgs are the go test flags the plan depends on.
type goTestArgs struct {
	bench     *regexp.Regexp
	count     int
	benchtime time.Duration // zero for an iteration count (-benchtime 1x)
	libbpf    bool          // -tags libbpf: BenchmarkRead has the libbpf mode
	pkgs      []string      // the packages named, as path.Clean has them: ringbuf, bench
}

// parseGoTest reads -bench, -count, -benchtime and -tags from a go test
// command line; the rest is go test's business.
func parseGoTest(args []string) (goTestArgs, error) {
	p := goTestArgs{count: 1, benchtime: time.Second}
	value := func(i int, arg, name string) (string, int, bool) {
		for _, dash := range []string{"-", "--", "-test."} {
			if arg == dash+name && i+1 < len(args) {
				return args[i+1], i + 1, true
			}
			if v, ok := strings.CutPrefix(arg, dash+name+"="); ok {
				return v, i, true
			}
		}
		return "", i, false
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if v, next, ok := value(i, arg, "bench"); ok {
			re, err := regexp.Compile(v)
			if err != nil {
				return p, fmt.Errorf("-bench %q: %w", v, err)
			}
			p.bench, i = re, next
		} else if v, next, ok := value(i, arg, "count"); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return p, fmt.Errorf("-count %q: want a positive number", v)
			}
			p.count, i = n, next
		} else if v, next, ok := value(i, arg, "benchtime"); ok {
			p.benchtime = 0
			if !strings.HasSuffix(v, "x") {
				d, err := time.ParseDuration(v)
				if err != nil {
					return p, fmt.Errorf("-benchtime %q: %w", v, err)
				}
				p.benchtime = d
			}
			i = next
		} else if v, next, ok := value(i, arg, "tags"); ok {
			p.libbpf = strings.Contains(","+v+",", ",libbpf,")
			i = next
		} else if strings.HasPrefix(arg, "./") {
			p.pkgs = append(p.pkgs, path.Clean(arg))
		}
	}
	if p.bench == nil {
		return p, fmt.Errorf("no -bench in the go test command")
	}
	return p, nil
}

// families are the benchmarks the make targets run. Their leaves follow
// the benchmarks' own loops and defaults (ringbuf/*bench*_test.go,
// bench/*_env_test.go); where a list is exported (our modes, the k2u
// cases, the XDP strategies) it is taken from there, so a new mode is
// counted without a change here. A run that shows more results than
// planned raises the total as it goes.
var families = []family{
	{
		pkg:  "ringbuf",
		name: "BenchmarkRead",
		leaves: func(p goTestArgs) (int, string) {
			sizes, err := drainbench.ParseSizes(envString("RINGBUF_BENCH_SIZES", drainbench.DefaultSizes))
			if err != nil {
				sizes = nil
			}
			// upstream, ours, floor, lease, lease-each, and libbpf where built.
			modes := 1 + len(ours.Modes) + 3
			if p.libbpf {
				modes++
			}
			return len(sizes) * modes * 2, fmt.Sprintf("%d sizes x %d modes x 2 touches", len(sizes), modes)
		},
		cost: func(p goTestArgs) time.Duration { return benchprogress.DrainCost(p.benchtime) },
	},
	{
		pkg:  "ringbuf",
		name: "BenchmarkWrite",
		leaves: func(p goTestArgs) (int, string) {
			sizes, err := drainbench.ParseSizes(envString("RINGBUF_BENCH_SIZES", drainbench.DefaultSizes))
			if err != nil {
				sizes = nil
			}
			// reserve, write, reserve-x2, batch, batch-x2, and libbpf
			// where built.
			modes := 5
			if p.libbpf {
				modes++
			}
			return len(sizes) * modes, fmt.Sprintf("%d sizes x %d modes", len(sizes), modes)
		},
		// The ramp to -benchtime, a 4 MiB ring and a program each.
		cost: func(p goTestArgs) time.Duration { return 20*time.Millisecond + 4*p.benchtime },
	},
	{
		pkg:    "ringbuf",
		name:   "BenchmarkEndToEnd",
		leaves: func(goTestArgs) (int, string) { return 6, "3 sizes x 2 wakeups" },
		cost:   func(p goTestArgs) time.Duration { return benchprogress.DrainCost(p.benchtime) },
	},
	{
		pkg:    "ringbuf",
		name:   "BenchmarkMultiRecords",
		leaves: func(goTestArgs) (int, string) { return 8, "2 sizes x 4 readers" },
		cost:   func(p goTestArgs) time.Duration { return 200*time.Millisecond + 8*p.benchtime },
	},
	{
		pkg:  "perf",
		name: "BenchmarkRead",
		leaves: func(goTestArgs) (int, string) {
			sizes, err := drainbench.ParseSizes(envString("PERF_BENCH_SIZES", drainbench.DefaultSizes))
			if err != nil {
				sizes = nil
			}
			modes := len(perfdrain.Modes)
			return len(sizes) * modes * 2, fmt.Sprintf("%d sizes x %d modes x 2 touches", len(sizes), modes)
		},
		// The fills of a 16 MiB buffer per CPU, untimed, and the ramp.
		cost: func(p goTestArgs) time.Duration { return 500*time.Millisecond + 6*p.benchtime },
	},
	{
		pkg:  "bench",
		name: "BenchmarkProducer",
		leaves: func(goTestArgs) (int, string) {
			sizes := envInts("K2U_SIZES", 5)
			return len(transportbench.ProducerCases()) * sizes, fmt.Sprintf("%d cases x %d sizes", len(transportbench.ProducerCases()), sizes)
		},
		cost: func(goTestArgs) time.Duration { return 1900 * time.Millisecond },
	},
	{
		pkg:  "bench",
		name: "BenchmarkK2U",
		leaves: func(goTestArgs) (int, string) {
			cases, sizes, rates := len(transportbench.EndToEndCases()), envInts("K2U_E2E_SIZES", 2), envInts("K2U_RATES", 3)
			return cases * sizes * rates, fmt.Sprintf("%d readers x %d sizes x %d rates", cases, sizes, rates)
		},
		cost: func(goTestArgs) time.Duration { return envDuration("K2U_DURATION", time.Second) + 500*time.Millisecond },
	},
	{
		pkg:  "bench",
		name: "BenchmarkRings",
		leaves: func(goTestArgs) (int, string) {
			// 1, 2 and every CPU, as far as there are CPUs.
			var counts []int
			for _, n := range []int{1, 2, runtime.NumCPU()} {
				if n <= runtime.NumCPU() && !slices.Contains(counts, n) {
					counts = append(counts, n)
				}
			}
			producers := envInts("RINGS_PRODUCERS", len(counts))
			sizes := envInts("RINGS_SIZES", 3)
			return 2 * producers * sizes * 2, fmt.Sprintf("2 layouts x %d producer counts x %d sizes x 2 flags", producers, sizes)
		},
		cost: func(p goTestArgs) time.Duration { return 600*time.Millisecond + 2*p.benchtime },
	},
	{
		pkg:  "bench",
		name: "BenchmarkSocketFilter",
		leaves: func(goTestArgs) (int, string) {
			bad, payloads, recvs := envInts("SOCKF_BAD", 4), envInts("SOCKF_PAYLOADS", 3), envInts("SOCKF_RECVS", 2)
			return 2 * bad * payloads * recvs, fmt.Sprintf("2 filters x %d bad x %d payloads x %d recvs", bad, payloads, recvs)
		},
		cost: func(goTestArgs) time.Duration {
			return envDuration("SOCKF_DURATION", 2*time.Second) + 50*time.Millisecond
		},
	},
	{
		pkg:  "bench",
		name: "BenchmarkXDP",
		leaves: func(goTestArgs) (int, string) {
			return len(xdpbench.Strategies()), fmt.Sprintf("%d strategies", len(xdpbench.Strategies()))
		},
		cost: func(goTestArgs) time.Duration {
			return envDuration("XDP_DURATION", 5*time.Second) + 100*time.Millisecond
		},
	},
	{
		pkg:  "bench",
		name: "BenchmarkXDPLoss",
		leaves: func(goTestArgs) (int, string) {
			rates := envInts("XDP_LOSS_PPS", 4)
			return rates * 2, fmt.Sprintf("%d rates x 2 strategies", rates)
		},
		cost: func(goTestArgs) time.Duration {
			return envDuration("XDP_DURATION", 5*time.Second) + 100*time.Millisecond
		},
	},
}

// plan is what one go test command will do.
type plan struct {
	results int
	cost    time.Duration
	lines   []string // one a family, for the announcement
}

// planFor adds up the families a go test command selects: those of the
// packages it names (./... names them all) that -bench matches.
func planFor(p goTestArgs) plan {
	var pl plan
	for _, f := range families {
		named := slices.Contains(p.pkgs, f.pkg) || slices.Contains(p.pkgs, "...")
		if !named || !p.bench.MatchString(f.name) {
			continue
		}
		leaves, how := f.leaves(p)
		n := leaves * p.count
		c := f.cost(p)
		pl.results += n
		pl.cost += time.Duration(n) * c
		pl.lines = append(pl.lines, fmt.Sprintf("%s: %d results (%s x %d runs), about %s",
			f.name, n, how, p.count, roundDuration(time.Duration(n)*c)))
	}
	return pl
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envInts is how many comma-separated values the variable name holds,
// def where it is unset.
func envInts(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	return len(strings.Split(v, ","))
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// roundDuration rounds to what a person reads: seconds under ten
// minutes, minutes above.
func roundDuration(d time.Duration) string {
	if d < 10*time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
