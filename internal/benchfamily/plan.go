//go:build linux

package benchfamily

import (
	"fmt"
	"strings"
	"time"
)

// A Plan is what a family's rounds will do, with its knobs as the
// environment has them: how many results, about how long on the
// reference host, and a line a benchmark saying how its results
// multiply.
type Plan struct {
	Results int
	Cost    time.Duration
	Lines   []string
}

// Plan adds up the benchmarks of f's runs over rounds; libbpf says
// whether the runs that have a libbpf peer are built with it.
func (f *Family) Plan(libbpf bool, rounds int) (Plan, error) {
	var pl Plan
	for _, r := range f.Runs {
		benchtime, err := r.BenchtimeNow()
		if err != nil {
			return Plan{}, err
		}
		setup := Setup{Libbpf: r.Libbpf && libbpf}
		if benchtime == "" {
			setup.Benchtime = time.Second // go test's default
		} else if !strings.HasSuffix(benchtime, "x") {
			if setup.Benchtime, err = time.ParseDuration(benchtime); err != nil {
				return Plan{}, err
			}
		}
		for _, b := range r.Benchmarks {
			leaves, how, err := b.Leaves(setup)
			if err != nil {
				return Plan{}, err
			}
			n := leaves * rounds
			c := time.Duration(n) * b.Cost(setup)
			pl.Results += n
			pl.Cost += c
			pl.Lines = append(pl.Lines, fmt.Sprintf("%s: %d results (%s x %d runs), about %s", b.Name, n, how, rounds, RoundDuration(c)))
		}
	}
	if rounds > 1 {
		pl.Lines = append(pl.Lines, fmt.Sprintf("in %d rounds: every benchmark runs once a round", rounds))
	}
	return pl, nil
}

// RoundDuration rounds to what a person reads: seconds under ten
// minutes, minutes above.
func RoundDuration(d time.Duration) string {
	if d < 10*time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
