package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"

	"github.com/ebpf-zc/ebpf/internal/ringmodel"
)

// Project reads BenchmarkRings results from in, fits a ringmodel.Model to the
// medians of each configuration's ns/event with one and with two
// producers, and writes to out, in the benchmark format, the projection
// for each count of producers: one line per configuration and count, its
// layout marked with ringmodel.ProjectionSuffix. A configuration missing either
// measurement is an error, as is a file with no BenchmarkRings results.
// It selects and groups results with benchproc, as benchstat and
// benchplot do, and takes medians from benchmath.
func Project(in io.Reader, name string, out io.Writer, producers []int) error {
	if len(producers) == 0 {
		return ErrNoProducers
	}
	filter, err := benchproc.NewFilter(".name:" + ringmodel.Benchmark)
	if err != nil {
		return err
	}
	var parser benchproc.ProjectionParser
	// A configuration: every key but producers, ordered as the output is.
	rowProj, err := parser.Parse("/layout@alpha,/size@num,/flags@alpha", filter)
	if err != nil {
		return err
	}
	countProj, err := parser.Parse("/producers@num", filter)
	if err != nil {
		return err
	}
	fields, countField := rowProj.Fields(), countProj.Fields()[0]

	perEvent := map[benchproc.Key]map[int][]float64{}
	rd := benchfmt.NewReader(in, name)
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue // a syntax error or unit metadata: not a result
		}
		if match, err := filter.Apply(res); err != nil {
			return err
		} else if !match {
			continue
		}
		n, err := strconv.Atoi(countProj.Project(res).Get(countField))
		v, ok := valueIn(res, ringmodel.UnitPerEvent)
		if err != nil || !ok {
			file, line := res.Pos()
			return fmt.Errorf("ringmodel: %s:%d: %s has no producers=N or no %s", file, line, res.Name, ringmodel.UnitPerEvent)
		}
		r := rowProj.Project(res)
		if perEvent[r] == nil {
			perEvent[r] = map[int][]float64{}
		}
		perEvent[r][n] = append(perEvent[r][n], v)
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("ringmodel: read %s: %w", name, err)
	}
	if len(perEvent) == 0 {
		return fmt.Errorf("ringmodel: %s holds no Benchmark%s results", name, ringmodel.Benchmark)
	}
	rows := slices.Collect(maps.Keys(perEvent))
	benchproc.SortKeys(rows)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# projection: t(N) = t(1) + (N-1)·(t(2) - t(1)), fitted to the medians of %s\n", name)
	for _, r := range rows {
		layout, size, flags := r.Get(fields[0]), r.Get(fields[1]), r.Get(fields[2])
		one, two := perEvent[r][1], perEvent[r][2]
		if len(one) == 0 || len(two) == 0 {
			return fmt.Errorf("ringmodel: layout=%s size=%s flags=%s: need producers=1 and producers=2 to fit, have %v",
				layout, size, flags, slices.Sorted(maps.Keys(perEvent[r])))
		}
		m, err := ringmodel.Fit(median(one), median(two))
		if err != nil {
			return fmt.Errorf("ringmodel: layout=%s size=%s flags=%s: %w", layout, size, flags, err)
		}
		for _, n := range producers {
			t, err := m.PerEvent(n)
			if err != nil {
				return err
			}
			rate, _ := m.EventsPerSecond(n)
			fmt.Fprintf(&buf, "Benchmark%s/layout=%s%s/producers=%d/size=%s/flags=%s 1 %.4g %s %.4g %s\n",
				ringmodel.Benchmark, layout, ringmodel.ProjectionSuffix, n, size, flags, t, ringmodel.UnitPerEvent, rate/1e6, ringmodel.UnitRate)
		}
	}
	_, err = out.Write(buf.Bytes())
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

// median is benchmath's center of vs (which must not be empty) when it
// assumes nothing of their distribution: their median.
func median(vs []float64) float64 {
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), 0.95).Center
}

// ErrNoProducers says the projection was given no producer counts.
var ErrNoProducers = errors.New("ringmodel: no producer counts to project to")
