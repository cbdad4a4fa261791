package ringmodel

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// The benchmark results Project reads: BenchmarkRings rows named
// layout=.../producers=N/size=.../flags=..., each reporting UnitPerEvent.
const (
	// Benchmark is the name of the benchmark Project reads.
	Benchmark = "Rings"
	// UnitPerEvent is the producer's ns per event.
	UnitPerEvent = "ns/event"
	// UnitRate is the events all producers place together per second
	// of their CPU time, in millions: producers / UnitPerEvent.
	UnitRate = "Mevents/s"
	// ProjectionSuffix marks a projected series: layout=shared becomes
	// layout=shared-projection, so plots and tables never mix the two.
	ProjectionSuffix = "-projection"
)

// row is one configuration of the benchmark, less its producer count.
type row struct {
	layout, size, flags string
}

// Project reads BenchmarkRings results from in, fits a Model to the
// medians of each configuration's ns/event with one and with two
// producers, and writes to out, in the benchmark format, the projection
// for each count of producers: one line per configuration and count, its
// layout marked with ProjectionSuffix. A configuration missing either
// measurement is an error, as is a file with no BenchmarkRings results.
func Project(in io.Reader, name string, out io.Writer, producers []int) error {
	if len(producers) == 0 {
		return ErrNoProducers
	}
	perEvent := map[row]map[int][]float64{}
	rd := benchfmt.NewReader(in, name)
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue // a syntax error or unit metadata: not a result
		}
		base, parts := res.Name.Parts()
		if string(base) != Benchmark {
			continue
		}
		keys := nameKeys(parts)
		n, err := strconv.Atoi(keys["producers"])
		v, ok := valueIn(res, UnitPerEvent)
		if err != nil || !ok {
			file, line := res.Pos()
			return fmt.Errorf("ringmodel: %s:%d: %s has no producers=N or no %s", file, line, res.Name, UnitPerEvent)
		}
		r := row{keys["layout"], keys["size"], keys["flags"]}
		if perEvent[r] == nil {
			perEvent[r] = map[int][]float64{}
		}
		perEvent[r][n] = append(perEvent[r][n], v)
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("ringmodel: read %s: %w", name, err)
	}
	if len(perEvent) == 0 {
		return fmt.Errorf("ringmodel: %s holds no Benchmark%s results", name, Benchmark)
	}
	rows := slices.SortedFunc(maps.Keys(perEvent), func(a, b row) int {
		return cmp.Or(strings.Compare(a.layout, b.layout), compareNumbers(a.size, b.size), strings.Compare(a.flags, b.flags))
	})
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# projection: t(N) = t(1) + (N-1)·(t(2) - t(1)), fitted to the medians of %s\n", name)
	for _, r := range rows {
		one, two := perEvent[r][1], perEvent[r][2]
		if len(one) == 0 || len(two) == 0 {
			return fmt.Errorf("ringmodel: layout=%s size=%s flags=%s: need producers=1 and producers=2 to fit, have %v",
				r.layout, r.size, r.flags, slices.Sorted(maps.Keys(perEvent[r])))
		}
		m, err := Fit(median(one), median(two))
		if err != nil {
			return fmt.Errorf("ringmodel: layout=%s size=%s flags=%s: %w", r.layout, r.size, r.flags, err)
		}
		for _, n := range producers {
			t, err := m.PerEvent(n)
			if err != nil {
				return err
			}
			rate, _ := m.EventsPerSecond(n)
			fmt.Fprintf(&buf, "Benchmark%s/layout=%s%s/producers=%d/size=%s/flags=%s 1 %.4g %s %.4g %s\n",
				Benchmark, r.layout, ProjectionSuffix, n, r.size, r.flags, t, UnitPerEvent, rate/1e6, UnitRate)
		}
	}
	_, err := out.Write(buf.Bytes())
	return err
}

// valueIn returns res's measurement in unit as the input wrote it:
// benchfmt turns ns/event into sec/event and keeps the original aside.
func valueIn(res *benchfmt.Result, unit string) (float64, bool) {
	for _, v := range res.Values {
		if v.OrigUnit == unit {
			return v.OrigValue, true
		}
		if v.Unit == unit {
			return v.Value, true
		}
	}
	return 0, false
}

// nameKeys returns the key=value parts of a benchmark name.
func nameKeys(parts [][]byte) map[string]string {
	keys := map[string]string{}
	for _, p := range parts {
		k, v, ok := strings.Cut(strings.TrimPrefix(string(p), "/"), "=")
		if ok {
			keys[k] = v
		}
	}
	return keys
}

// compareNumbers orders decimal strings by value, others as text.
func compareNumbers(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return cmp.Compare(x, y)
}

// median returns the median of vs, which must not be empty.
func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ErrNoProducers says the projection was given no producer counts.
var ErrNoProducers = errors.New("ringmodel: no producer counts to project to")
