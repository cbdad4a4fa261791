package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads Go benchmark output (the benchfmt text format): result
// lines "BenchmarkName-P  N  value unit  value unit ..." and
// configuration lines "key: value"; it ignores everything else.
func parse(r io.Reader) (*results, error) {
	res := &results{config: map[string]string{}}
	byName := map[string]*row{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if key, value, ok := configLine(text); ok {
			res.config[key] = value
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 2 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue // a benchmark's log output, not a result
		}
		if len(fields)%2 != 0 {
			return nil, fmt.Errorf("line %d: values and units do not pair up: %q", line, text)
		}
		name := procSuffix.ReplaceAllString(strings.TrimPrefix(fields[0], "Benchmark"), "")
		rw := byName[name]
		if rw == nil {
			rw = &row{name: name, metrics: map[string][]float64{}}
			byName[name] = rw
			res.rows = append(res.rows, rw)
		}
		rw.runs++
		for i := 2; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			rw.metrics[fields[i+1]] = append(rw.metrics[fields[i+1]], v)
		}
	}
	return res, sc.Err()
}

// configLine recognises "key: value" with a lower-case key without
// spaces, as benchfmt does.
func configLine(s string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(s, ":")
	if !ok || key == "" || strings.ContainsAny(key, " \t") || key[0] < 'a' || key[0] > 'z' {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}

// median returns the median of a metric over the runs, and whether the
// metric was reported at all.
func (r *row) median(unit string) (float64, bool) {
	vs := slices.Clone(r.metrics[unit])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2, true
	}
	return vs[len(vs)/2], true
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
