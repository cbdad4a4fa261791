package main

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// row is one benchmark name's results: every value each metric took,
// one per run.
type row struct {
	name    string // without "Benchmark" and the -GOMAXPROCS suffix
	metrics map[string][]float64
	runs    int
}

// results is a benchmark output file: its rows in first-seen order and
// its configuration lines.
type results struct {
	rows   []*row
	config map[string]string
}

// parse reads Go benchmark output with benchfmt. A line benchfmt cannot
// read is an error: a table with a run silently missing would mislead.
func parse(r io.Reader) (*results, error) {
	res := &results{config: map[string]string{}}
	byName := map[string]*row{}
	rd := benchfmt.NewReader(r, "input")
	for rd.Scan() {
		var b *benchfmt.Result
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			b = rec
		default:
			continue
		}
		for _, c := range b.Config {
			res.config[c.Key] = string(c.Value)
		}
		name := rowName(b.Name)
		rw := byName[name]
		if rw == nil {
			rw = &row{name: name, metrics: map[string][]float64{}}
			byName[name] = rw
			res.rows = append(res.rows, rw)
		}
		rw.runs++
		for _, v := range b.Values {
			// The unit as the benchmark wrote it: benchfmt would turn
			// bpf-ns/pkt into bpf-sec/pkt.
			unit, value := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, value = v.OrigUnit, v.OrigValue
			}
			rw.metrics[unit] = append(rw.metrics[unit], value)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return res, nil
}

// rowName is a benchmark's name without "Benchmark" and the -GOMAXPROCS
// suffix, as in XDP/strategy=rb-epoll.
func rowName(n benchfmt.Name) string {
	base, parts := n.Parts()
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(string(base), "Benchmark"))
	for _, p := range parts {
		if len(p) > 0 && p[0] == '-' {
			continue
		}
		b.Write(p)
	}
	return b.String()
}

// median returns the median of a metric over the runs, as benchstat
// computes it, and whether the metric was reported at all.
func (r *row) median(unit string) (float64, bool) {
	vs := r.metrics[unit]
	if len(vs) == 0 {
		return 0, false
	}
	s := benchmath.NewSample(append([]float64(nil), vs...), &benchmath.DefaultThresholds)
	return benchmath.AssumeNothing.Summary(s, 0.95).Center, true
}

// key returns the value of a name's key=value part, as in
// XDP/pps=100000/strategy=rb-epoll.
func (r *row) key(k string) string {
	for _, part := range strings.Split(r.name, "/") {
		if v, ok := strings.CutPrefix(part, k+"="); ok {
			return v
		}
	}
	return ""
}
