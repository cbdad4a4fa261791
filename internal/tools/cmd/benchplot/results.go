package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"
)

// confidence is the level of the interval drawn around each median, the
// one benchstat prints.
const confidence = 0.95

// stat summarises the repetitions of one measurement with benchmath's
// distribution-free summary, as benchstat does.
type stat struct {
	N      int
	Median float64
	// Lo and Hi bound the 95 % confidence interval of the median when CI
	// is set; with too few runs for one (benchmath wants 6) they are the
	// smallest and largest value instead.
	Lo, Hi float64
	CI     bool
}

// summarise computes the median of vs and the interval around it. vs must
// not be empty; it is sorted in place.
func summarise(vs []float64) stat {
	s := benchmath.NewSample(vs, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	st := stat{N: len(vs), Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, CI: true}
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) {
		st.Lo, st.Hi, st.CI = s.Values[0], s.Values[len(s.Values)-1], false
	}
	return st
}

// query is what to select and how to group it, in benchstat's filter and
// projection syntax (go doc golang.org/x/perf/benchproc/syntax).
type query struct {
	filter string // "" keeps every result
	// x and series are projections (line, bar: x is too), or units (scatter:
	// x and y).
	x, series string
	y         string
	scatter   bool
}

// machine is where the plotted results were measured, from the inputs'
// configuration lines; each field joins the distinct values with " | ".
type machine struct {
	cpu, kernel, platform string
}

// point is one summarised value of a series: at category or x value X.
type point struct {
	X    string  // the x projection's value as written in the name
	XNum float64 // X as a number; set only when every X of the table is numeric
	Y    stat
}

// series is the points of one value of the series projection, in x order.
type series struct {
	Name   string
	Points []point
}

// table is the result of grouping by (series, x) for line and bar plots.
type table struct {
	XKey, SeriesKey, Unit string
	// Xs lists every x value in the x projection's order, or by value
	// when they are all numbers.
	Xs []string
	// Numeric reports whether every x value parsed as a number; the
	// points of every series are then sorted by value.
	Numeric bool
	Series  []series
	Machine machine
}

// scatterPoint is one point of a scatter plot.
type scatterPoint struct {
	Label string
	X, Y  stat
}

// scatterData is the result of grouping by series for a scatter plot.
type scatterData struct {
	SeriesKey, XUnit, YUnit string
	Points                  []scatterPoint
	Machine                 machine
}

// selection is the inputs after the filter, grouped by the projections.
type selection struct {
	q     query
	xProj *benchproc.Projection // nil for scatter
	sProj *benchproc.Projection // nil when there is no series
	// residue projects every key that neither x nor series names: two
	// results of one group that differ in it are different benchmarks.
	residue *benchproc.Projection
	groups  map[groupKey]*group
	// xs and ss list the distinct x and series keys, sorted by their
	// projections' orders once everything is read.
	xs, ss []benchproc.Key
	units  []string // every unit read, as written, in order of first use
	read   int      // results read, before the filter
	// configs holds the distinct values of the configuration keys the
	// footer names (cpu, kernel, goos, goarch) among grouped results.
	configs map[string][]string
	// warnings are the lines benchfmt could not read; they are skipped.
	warnings   []string
	matchedAny bool // the filter kept at least one result
}

// groupKey is one plotted point: its series and x keys; either is zero
// where there is no such projection.
type groupKey struct{ s, x benchproc.Key }

// group is the values of one plotted point: one value per result for
// each of the units the plot needs, and the residue of every result, to
// tell repetitions from different benchmarks.
type group struct {
	vals    map[string][]float64
	residue map[benchproc.Key]bool
}

// selectResults reads the inputs, keeps what q.filter matches and groups
// it by q's projections.
func selectResults(files *benchfmt.Files, q query) (*selection, error) {
	filterExpr := q.filter
	if strings.TrimSpace(filterExpr) == "" {
		filterExpr = "*"
	}
	filter, err := benchproc.NewFilter(filterExpr)
	if err != nil {
		return nil, fmt.Errorf("-filter: %w", err)
	}
	sel := &selection{q: q, groups: map[groupKey]*group{}, configs: map[string][]string{}}
	var parser benchproc.ProjectionParser
	if !q.scatter {
		if q.x == "" {
			return nil, errors.New("-x: no projection given, e.g. /size")
		}
		if sel.xProj, err = parser.Parse(q.x, filter); err != nil {
			return nil, fmt.Errorf("-x: %w", err)
		}
	}
	if q.series != "" {
		if sel.sProj, err = parser.Parse(q.series, filter); err != nil {
			return nil, fmt.Errorf("-series: %w", err)
		}
	}
	sel.residue = parser.Residue()
	units := sel.needUnits()
	for _, u := range units {
		if u == "" {
			return nil, errors.New("no unit given: -y names one (scatter: -x and -y)")
		}
	}

	seenUnit := map[string]bool{}
	seenX, seenS := map[benchproc.Key]bool{}, map[benchproc.Key]bool{}
	for files.Scan() {
		var res *benchfmt.Result
		switch rec := files.Result().(type) {
		case *benchfmt.SyntaxError:
			sel.warnings = append(sel.warnings, rec.Error())
			continue
		case *benchfmt.Result:
			res = rec
		default:
			continue
		}
		sel.read++
		for _, v := range res.Values {
			if u := writtenUnit(v); !seenUnit[u] {
				seenUnit[u] = true
				sel.units = append(sel.units, u)
			}
		}
		match, err := filter.Match(res)
		if err != nil {
			return nil, fmt.Errorf("-filter: %w", err)
		}
		if !match.Apply(res) {
			continue
		}
		sel.matchedAny = true
		vals, ok := valuesOf(res, units)
		if !ok {
			continue
		}
		var gk groupKey
		if sel.xProj != nil {
			gk.x = sel.xProj.Project(res)
			if gk.x.StringValues() == "" {
				continue // the result lacks the x key
			}
		}
		if sel.sProj != nil {
			gk.s = sel.sProj.Project(res)
			if gk.s.StringValues() == "" {
				continue
			}
		}
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				file, line := res.Pos()
				return nil, fmt.Errorf("%s:%d: %s is %v, which cannot be plotted", file, line, units[i], v)
			}
		}
		g := sel.groups[gk]
		if g == nil {
			g = &group{vals: map[string][]float64{}, residue: map[benchproc.Key]bool{}}
			sel.groups[gk] = g
		}
		for i, u := range units {
			g.vals[u] = append(g.vals[u], vals[i])
		}
		g.residue[sel.residue.Project(res)] = true
		if !seenX[gk.x] {
			seenX[gk.x] = true
			sel.xs = append(sel.xs, gk.x)
		}
		if !seenS[gk.s] {
			seenS[gk.s] = true
			sel.ss = append(sel.ss, gk.s)
		}
		for _, k := range []string{"cpu", "kernel", "goos", "goarch"} {
			if v := res.GetConfig(k); v != "" && !slices.Contains(sel.configs[k], v) {
				sel.configs[k] = append(sel.configs[k], v)
			}
		}
	}
	if err := files.Err(); err != nil {
		return nil, err
	}
	// From here on the selection goes back with an error too, so the
	// caller can report the unreadable lines that may explain it.
	if sel.read == 0 {
		return sel, fmt.Errorf("no benchmark results in %s", strings.Join(displayPaths(files.Paths), ", "))
	}
	if !sel.matchedAny {
		return sel, fmt.Errorf("no results match -filter %s (of %d read)", q.filter, sel.read)
	}
	if len(sel.groups) == 0 {
		return sel, sel.explainEmpty(units)
	}
	// Zero keys (no projection) have nothing to sort by.
	if sel.xProj != nil {
		benchproc.SortKeys(sel.xs)
	}
	if sel.sProj != nil {
		benchproc.SortKeys(sel.ss)
	}
	if err := sel.checkMixed(); err != nil {
		return sel, err
	}
	return sel, nil
}

// needUnits lists the units every plotted result must have.
func (sel *selection) needUnits() []string {
	if sel.q.scatter {
		return []string{sel.q.x, sel.q.y}
	}
	return []string{sel.q.y}
}

// explainEmpty says why the filter kept results but none could be plotted.
func (sel *selection) explainEmpty(units []string) error {
	for _, u := range units {
		if !slices.Contains(sel.units, u) && !slices.Contains(sel.units, tidyUnit(u)) {
			return fmt.Errorf("unknown unit %q (units: %s)", u, strings.Join(sel.units, ", "))
		}
	}
	what := fmt.Sprintf("unit %s", strings.Join(units, " and "))
	if sel.xProj != nil {
		what += ", -x " + sel.q.x
	}
	if sel.sProj != nil {
		what += ", -series " + sel.q.series
	}
	return fmt.Errorf("no result kept by -filter has %s together", what)
}

// tidyUnit is the unit benchfmt turns u into (ns/op becomes sec/op).
func tidyUnit(u string) string {
	_, tidied := benchunit.Tidy(1, u)
	return tidied
}

// writtenUnit is a value's unit as the input wrote it.
func writtenUnit(v benchfmt.Value) string {
	if v.OrigUnit != "" {
		return v.OrigUnit
	}
	return v.Unit
}

// valuesOf finds each unit's value in res, by the unit as written (ns/op)
// or as benchfmt tidies it (sec/op).
func valuesOf(res *benchfmt.Result, units []string) ([]float64, bool) {
	out := make([]float64, len(units))
	for i, u := range units {
		found := false
		for _, v := range res.Values {
			switch u {
			case v.Unit:
				out[i], found = v.Value, true
			case v.OrigUnit:
				out[i], found = v.OrigValue, true
			}
			if found {
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// checkMixed returns an error if one group holds results that differ in
// more than the repetition: another name key, benchmark or configuration.
// Their median would mix different benchmarks, the mistake benchstat warns
// of with "benchmarks vary in".
func (sel *selection) checkMixed() error {
	for _, s := range sel.ss {
		for _, x := range sel.xs {
			g := sel.groups[groupKey{s, x}]
			if g == nil || len(g.residue) < 2 {
				continue
			}
			keys := slices.Collect(maps.Keys(g.residue))
			fields := benchproc.NonSingularFields(keys)
			var parts []string
			for _, f := range fields {
				var vals []string
				for _, k := range keys {
					if v := k.Get(f); !slices.Contains(vals, v) {
						vals = append(vals, v)
					}
				}
				slices.Sort(vals)
				parts = append(parts, fmt.Sprintf("%s (%s)", f.Name, strings.Join(vals, ", ")))
			}
			return fmt.Errorf("results for %s vary in %s, so one point would mix different benchmarks: narrow -filter, or add the key to -series",
				describeGroup(x, s), strings.Join(parts, "; "))
		}
	}
	return nil
}

// describeGroup names one (x, series) group for messages.
func describeGroup(x, s benchproc.Key) string {
	var parts []string
	for _, k := range []benchproc.Key{x, s} {
		if !k.IsZero() {
			parts = append(parts, k.String())
		}
	}
	return strings.Join(parts, " ")
}

// table groups the selection for a line or bar plot. With numeric set,
// every x value must be a number.
func (sel *selection) table(numeric bool) (*table, error) {
	t := &table{XKey: sel.q.x, SeriesKey: sel.q.series, Unit: sel.q.y, Machine: sel.machine()}
	xnum := make(map[benchproc.Key]float64, len(sel.xs))
	t.Numeric = true
	for _, x := range sel.xs {
		v, err := strconv.ParseFloat(x.StringValues(), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			if numeric {
				return nil, fmt.Errorf("-kind line needs numeric values of -x %s: %q is not a number (use -kind bar for categories)", sel.q.x, x.StringValues())
			}
			t.Numeric = false
			break
		}
		xnum[x] = v
	}
	xs := slices.Clone(sel.xs)
	if t.Numeric {
		slices.SortStableFunc(xs, func(a, b benchproc.Key) int { return cmp.Compare(xnum[a], xnum[b]) })
	}
	for _, x := range xs {
		t.Xs = append(t.Xs, x.StringValues())
	}
	for _, s := range sel.ss {
		sr := series{Name: s.StringValues()}
		if s.IsZero() {
			sr.Name = sel.q.y
		}
		for _, x := range xs {
			g := sel.groups[groupKey{s, x}]
			if g == nil {
				continue
			}
			sr.Points = append(sr.Points, point{X: x.StringValues(), XNum: xnum[x], Y: summarise(g.vals[sel.q.y])})
		}
		t.Series = append(t.Series, sr)
	}
	return t, nil
}

// scatter groups the selection for a scatter plot: one point per value
// of the series projection.
func (sel *selection) scatter() *scatterData {
	d := &scatterData{SeriesKey: sel.q.series, XUnit: sel.q.x, YUnit: sel.q.y, Machine: sel.machine()}
	for _, s := range sel.ss {
		g := sel.groups[groupKey{s: s}]
		d.Points = append(d.Points, scatterPoint{
			Label: s.StringValues(),
			X:     summarise(g.vals[sel.q.x]),
			Y:     summarise(g.vals[sel.q.y]),
		})
	}
	return d
}

// machine joins the distinct configuration values of the selected results.
func (sel *selection) machine() machine {
	var plats []string
	for _, os := range sel.configs["goos"] {
		for _, arch := range sel.configs["goarch"] {
			plats = append(plats, os+"/"+arch)
		}
	}
	return machine{
		cpu:      strings.Join(sel.configs["cpu"], " | "),
		kernel:   strings.Join(sel.configs["kernel"], " | "),
		platform: strings.Join(plats, " | "),
	}
}

// displayPaths gives the paths as the user wrote them, "-" as stdin.
func displayPaths(paths []string) []string {
	if len(paths) == 0 {
		return []string{"standard input"}
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		if _, after, ok := strings.Cut(p, "="); ok {
			p = after
		}
		if p == "-" {
			p = "standard input"
		}
		out[i] = p
	}
	return out
}
