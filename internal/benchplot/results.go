package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Special keys that every result has besides its sub-benchmark name keys
// and its configuration keys (goos, cpu, pkg, .file, ...).
const (
	keyName     = ".name"     // base name without the "Benchmark" prefix
	keyFullName = ".fullname" // full name without "Benchmark" and -GOMAXPROCS
	keyProcs    = ".procs"    // GOMAXPROCS suffix, "" if there is none
)

// result is one benchmark result line, reduced to what plotting needs.
type result struct {
	// keys holds the sub-benchmark name keys (size=64 gives "size": "64"),
	// the configuration keys in force for the line, and the special
	// keys .name, .fullname and .procs. Name keys shadow configuration
	// keys of the same name.
	keys map[string]string
	// nameKeys lists the name keys in the order they appear in the name,
	// and positional name parts (a "/part" without "=") as "/part".
	nameKeys []string
	// values maps both the unit as written ("ns/op") and the unit as
	// benchfmt tidies it ("sec/op") to the measurement in that unit.
	values map[string]float64
	// pos is "file:line", for error messages.
	pos string
}

// resultSet is every result read from the inputs, in input order.
type resultSet struct {
	results []result
	// units lists the units as written in the inputs, in order of first use.
	units []string
	// warnings holds the syntax errors benchfmt reported; they are not fatal.
	warnings []string
}

// readFiles reads Go benchmark results from the named files ("-" is
// standard input) with benchfmt.
func readFiles(paths []string) (*resultSet, error) {
	rs, err := readAll(&benchfmt.Files{Paths: paths, AllowStdin: true, AllowLabels: true})
	if err != nil {
		return nil, err
	}
	if len(rs.results) == 0 {
		return nil, fmt.Errorf("no benchmark results in %s", strings.Join(displayPaths(paths), ", "))
	}
	return rs, nil
}

// readString reads results from an in-memory benchmark output named name.
func readString(name, text string) (*resultSet, error) {
	rs, err := readAll(benchfmt.NewReader(strings.NewReader(text), name))
	if err != nil {
		return nil, err
	}
	if len(rs.results) == 0 {
		return nil, fmt.Errorf("no benchmark results in %s", name)
	}
	return rs, nil
}

// scanner is what benchfmt.Files and benchfmt.Reader have in common.
type scanner interface {
	Scan() bool
	Result() benchfmt.Record
	Err() error
}

// readAll collects every result of sc.
func readAll(sc scanner) (*resultSet, error) {
	rs := &resultSet{}
	seenUnit := map[string]bool{}
	for sc.Scan() {
		switch rec := sc.Result().(type) {
		case *benchfmt.SyntaxError:
			rs.warnings = append(rs.warnings, rec.Error())
		case *benchfmt.Result:
			for _, v := range rec.Values {
				u := v.Unit
				if v.OrigUnit != "" {
					u = v.OrigUnit
				}
				if !seenUnit[u] {
					seenUnit[u] = true
					rs.units = append(rs.units, u)
				}
			}
			rs.results = append(rs.results, convert(rec))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rs, nil
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

// convert copies what plotting needs out of a benchfmt.Result, which the
// reader reuses for the next line.
func convert(rec *benchfmt.Result) result {
	file, line := rec.Pos()
	r := result{
		keys:   make(map[string]string, len(rec.Config)+8),
		values: make(map[string]float64, 2*len(rec.Values)),
		pos:    fmt.Sprintf("%s:%d", file, line),
	}
	for _, c := range rec.Config {
		r.keys[c.Key] = string(c.Value)
	}
	base, parts := rec.Name.Parts()
	full := string(base)
	for _, p := range parts {
		s := string(p)
		switch {
		case strings.HasPrefix(s, "-"):
			r.keys[keyProcs] = s[1:]
			continue
		case strings.Contains(s, "="):
			k, v, _ := strings.Cut(s[1:], "=")
			r.keys[k] = v
			r.nameKeys = append(r.nameKeys, k)
		default:
			r.nameKeys = append(r.nameKeys, s)
		}
		full += s
	}
	r.keys[keyName] = strings.TrimPrefix(string(base), "Benchmark")
	r.keys[keyFullName] = full
	if _, ok := r.keys[keyProcs]; !ok {
		r.keys[keyProcs] = ""
	}
	for _, v := range rec.Values {
		r.values[v.Unit] = v.Value
		if v.OrigUnit != "" {
			r.values[v.OrigUnit] = v.OrigValue
		}
	}
	return r
}

// filter is a conjunction of key=value conditions; several values for one
// key are alternatives.
type filter map[string][]string

// parseFilters parses -filter arguments: each is one or more comma-separated
// key=value pairs.
func parseFilters(args []string) (filter, error) {
	f := filter{}
	for _, arg := range args {
		for _, kv := range strings.Split(arg, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("bad -filter %q: want key=value", kv)
			}
			f[k] = append(f[k], v)
		}
	}
	return f, nil
}

// String gives the filter back in -filter syntax, keys sorted.
func (f filter) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		for _, v := range f[k] {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, ",")
}

// match reports whether r satisfies every condition of f.
func (f filter) match(r *result) bool {
	for k, vs := range f {
		v, ok := r.keys[k]
		if !ok || !slices.Contains(vs, v) {
			return false
		}
	}
	return true
}

// apply returns the results that match f, or an error that says which
// condition selected nothing.
func (f filter) apply(rs []result) ([]result, error) {
	var out []result
	for i := range rs {
		if f.match(&rs[i]) {
			out = append(out, rs[i])
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	// Find the first condition that no result meets on its own, to say why.
	for _, k := range slices.Sorted(maps.Keys(f)) {
		seen := valuesOf(rs, k)
		if len(seen) == 0 {
			return nil, fmt.Errorf("no results match -filter %s: no result has key %q (keys: %s)",
				f, k, strings.Join(keysOf(rs), ", "))
		}
		if !slices.ContainsFunc(f[k], func(v string) bool { return slices.Contains(seen, v) }) {
			return nil, fmt.Errorf("no results match -filter %s: %s is one of %s",
				f, k, strings.Join(seen, ", "))
		}
	}
	return nil, fmt.Errorf("no results match -filter %s (each condition matches some results, but no result matches all)", f)
}

// stat summarises the repetitions of one measurement.
type stat struct {
	N                int
	Median, Min, Max float64
}

// summarise computes the median, minimum and maximum of vs, which must not
// be empty. It sorts vs in place.
func summarise(vs []float64) stat {
	sort.Float64s(vs)
	n := len(vs)
	med := vs[n/2]
	if n%2 == 0 {
		med = (vs[n/2-1] + vs[n/2]) / 2
	}
	return stat{N: n, Median: med, Min: vs[0], Max: vs[n-1]}
}

// point is one summarised value of a series: at category or x value X.
type point struct {
	X    string  // the x key's value as written in the name
	XNum float64 // X as a number; set only when every X of the table is numeric
	Y    stat
}

// series is the points of one value of the series key, in x order.
type series struct {
	Name   string
	Points []point
}

// table is the result of grouping by (series, x) for line and bar plots.
type table struct {
	XKey, SeriesKey, Unit string
	// Xs lists every x value, in x order.
	Xs []string
	// Numeric reports whether every x value parsed as a number; the Xs
	// and the points of every series are then sorted by value.
	Numeric bool
	Series  []series
	// Used is the results that went into the table.
	Used []result
}

// lookupValue finds the measurement of unit in r.
func lookupValue(r *result, unit string) (float64, bool) {
	v, ok := r.values[unit]
	return v, ok
}

// checkUnit returns an error if no result has unit.
func checkUnit(rs []result, all *resultSet, unit, flagName string) error {
	if unit == "" {
		return fmt.Errorf("%s: no unit given (units: %s)", flagName, strings.Join(all.units, ", "))
	}
	for i := range rs {
		if _, ok := rs[i].values[unit]; ok {
			return nil
		}
	}
	return fmt.Errorf("%s: unknown unit %q (units: %s)", flagName, unit, strings.Join(all.units, ", "))
}

// checkKey returns an error if no result has key.
func checkKey(rs []result, key, flagName string) error {
	if key == "" {
		return fmt.Errorf("%s: no key given (keys: %s)", flagName, strings.Join(keysOf(rs), ", "))
	}
	for i := range rs {
		if _, ok := rs[i].keys[key]; ok {
			return nil
		}
	}
	return fmt.Errorf("%s: no result has key %q (keys: %s)", flagName, key, strings.Join(keysOf(rs), ", "))
}

// groupXY groups rs by the series key and the x key, and summarises the
// unit's values of each group. An empty seriesKey puts every result in one
// series named after the unit. Results without the keys or the unit are
// left out. If numeric is set every x value must be a number.
func groupXY(all *resultSet, rs []result, xKey, seriesKey, unit string, numeric bool) (*table, error) {
	if err := checkKey(rs, xKey, "-x"); err != nil {
		return nil, err
	}
	if seriesKey != "" {
		if err := checkKey(rs, seriesKey, "-series"); err != nil {
			return nil, err
		}
	}
	if err := checkUnit(rs, all, unit, "-y"); err != nil {
		return nil, err
	}

	type gkey struct{ s, x string }
	vals := map[gkey][]float64{}
	members := map[gkey][]int{}
	var seriesOrder, xOrder []string
	seenS, seenX := map[string]bool{}, map[string]bool{}
	t := &table{XKey: xKey, SeriesKey: seriesKey, Unit: unit}
	for i := range rs {
		r := &rs[i]
		x, ok := r.keys[xKey]
		if !ok {
			continue
		}
		s := unit
		if seriesKey != "" {
			if s, ok = r.keys[seriesKey]; !ok {
				continue
			}
		}
		v, ok := lookupValue(r, unit)
		if !ok {
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: %s is %v, which cannot be plotted", r.pos, unit, v)
		}
		if !seenS[s] {
			seenS[s] = true
			seriesOrder = append(seriesOrder, s)
		}
		if !seenX[x] {
			seenX[x] = true
			xOrder = append(xOrder, x)
		}
		k := gkey{s, x}
		vals[k] = append(vals[k], v)
		members[k] = append(members[k], len(t.Used))
		t.Used = append(t.Used, *r)
	}
	if len(t.Used) == 0 {
		return nil, fmt.Errorf("no result has -x key %q, -series key %q and unit %q together", xKey, seriesKey, unit)
	}

	xnum, numErr := parseNumbers(xOrder)
	if numErr != nil && numeric {
		return nil, fmt.Errorf("-kind line needs numeric values of -x %s: %w (use -kind bar for categories)", xKey, numErr)
	}
	t.Numeric = numErr == nil
	if t.Numeric {
		sortByNumber(xOrder, xnum)
	}
	if num, err := parseNumbers(seriesOrder); err == nil {
		sortByNumber(seriesOrder, num)
	}
	t.Xs = xOrder

	for _, s := range seriesOrder {
		sr := series{Name: s}
		for _, x := range xOrder {
			k := gkey{s, x}
			if len(vals[k]) == 0 {
				continue
			}
			if err := checkMixed(t.Used, members[k], []string{xKey, seriesKey}, describeGroup(xKey, x, seriesKey, s)); err != nil {
				return nil, err
			}
			p := point{X: x, Y: summarise(vals[k])}
			if t.Numeric {
				p.XNum = xnum[x]
			}
			sr.Points = append(sr.Points, p)
		}
		t.Series = append(t.Series, sr)
	}
	return t, nil
}

// scatterPoint is one labelled point of a scatter plot.
type scatterPoint struct {
	Label string
	X, Y  stat
}

// scatterData is the result of grouping by series for a scatter plot.
type scatterData struct {
	SeriesKey, XUnit, YUnit string
	Points                  []scatterPoint
	Used                    []result
}

// groupScatter groups rs by the series key and summarises two units per
// group. Results lacking the key or either unit are left out.
func groupScatter(all *resultSet, rs []result, seriesKey, xUnit, yUnit string) (*scatterData, error) {
	if err := checkKey(rs, seriesKey, "-series"); err != nil {
		return nil, err
	}
	if err := checkUnit(rs, all, xUnit, "-x"); err != nil {
		return nil, err
	}
	if err := checkUnit(rs, all, yUnit, "-y"); err != nil {
		return nil, err
	}
	d := &scatterData{SeriesKey: seriesKey, XUnit: xUnit, YUnit: yUnit}
	xs, ys := map[string][]float64{}, map[string][]float64{}
	members := map[string][]int{}
	var order []string
	for i := range rs {
		r := &rs[i]
		s, ok := r.keys[seriesKey]
		if !ok {
			continue
		}
		x, okx := lookupValue(r, xUnit)
		y, oky := lookupValue(r, yUnit)
		if !okx || !oky {
			continue
		}
		for _, v := range []float64{x, y} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: value %v cannot be plotted", r.pos, v)
			}
		}
		if _, seen := xs[s]; !seen {
			order = append(order, s)
		}
		xs[s] = append(xs[s], x)
		ys[s] = append(ys[s], y)
		members[s] = append(members[s], len(d.Used))
		d.Used = append(d.Used, *r)
	}
	if len(d.Used) == 0 {
		return nil, fmt.Errorf("no result has -series key %q and both units %q and %q", seriesKey, xUnit, yUnit)
	}
	if num, err := parseNumbers(order); err == nil {
		sortByNumber(order, num)
	}
	for _, s := range order {
		if err := checkMixed(d.Used, members[s], []string{seriesKey}, seriesKey+"="+s); err != nil {
			return nil, err
		}
		d.Points = append(d.Points, scatterPoint{Label: s, X: summarise(xs[s]), Y: summarise(ys[s])})
	}
	return d, nil
}

// identityKeys are the keys, besides the name keys, whose differences mean
// two results measure different things rather than repeat one measurement.
var identityKeys = []string{keyName, keyProcs, "pkg"}

// identity describes what r measures, leaving out the exempt (grouping)
// keys: its package, GOMAXPROCS and name without the exempt name keys.
func identity(r *result, exempt []string) string {
	var b strings.Builder
	b.WriteString(r.keys["pkg"])
	b.WriteString(" ")
	b.WriteString(r.keys[keyName])
	for _, k := range r.nameKeys {
		if slices.Contains(exempt, k) {
			continue
		}
		if strings.HasPrefix(k, "/") {
			b.WriteString(k)
		} else {
			b.WriteString("/" + k + "=" + r.keys[k])
		}
	}
	b.WriteString("-" + r.keys[keyProcs])
	return b.String()
}

// checkMixed returns an error if the results of one group (indexes idx into
// used) differ in a name key, the benchmark name, GOMAXPROCS or package:
// their median would mix different benchmarks. The grouping keys themselves
// are exempt.
func checkMixed(used []result, idx []int, exempt []string, group string) error {
	if len(idx) < 2 {
		return nil
	}
	first := &used[idx[0]]
	id := identity(first, exempt)
	for _, j := range idx[1:] {
		r := &used[j]
		if identity(r, exempt) == id {
			continue
		}
		// Name the first key that differs, with every value it takes in
		// the group, so the user can pick one.
		keys := append(slices.Clone(identityKeys), first.nameKeys...)
		keys = append(keys, r.nameKeys...)
		for _, k := range keys {
			if strings.HasPrefix(k, "/") || slices.Contains(exempt, k) {
				continue
			}
			a, aok := first.keys[k]
			b, bok := r.keys[k]
			if a == b && aok == bok {
				continue
			}
			vals := map[string]bool{}
			for _, i := range idx {
				vals[used[i].keys[k]] = true
			}
			return fmt.Errorf("results for %s differ in %s (%s), so their median would mix different benchmarks: select one with -filter %s=..., or group by it",
				group, k, strings.Join(slices.Sorted(maps.Keys(vals)), ", "), k)
		}
		return fmt.Errorf("results for %s come from different benchmarks (%s at %s, %s at %s): select one with -filter %s=...",
			group, first.keys[keyFullName], first.pos, r.keys[keyFullName], r.pos, keyFullName)
	}
	return nil
}

// describeGroup names one (x, series) group for messages.
func describeGroup(xKey, x, seriesKey, s string) string {
	if seriesKey == "" {
		return xKey + "=" + x
	}
	return xKey + "=" + x + " " + seriesKey + "=" + s
}

// parseNumbers parses every string as a float, or says which one is not a
// number.
func parseNumbers(ss []string) (map[string]float64, error) {
	m := make(map[string]float64, len(ss))
	for _, s := range ss {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		m[s] = v
	}
	return m, nil
}

// sortByNumber sorts ss by their values in num.
func sortByNumber(ss []string, num map[string]float64) {
	sort.SliceStable(ss, func(i, j int) bool { return num[ss[i]] < num[ss[j]] })
}

// valuesOf lists the distinct values of key among rs, in order of first use.
func valuesOf(rs []result, key string) []string {
	var out []string
	seen := map[string]bool{}
	for i := range rs {
		if v, ok := rs[i].keys[key]; ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// keysOf lists every key of rs, name keys first in name order, then the
// special and configuration keys sorted.
func keysOf(rs []result) []string {
	var names, others []string
	seen := map[string]bool{}
	for i := range rs {
		for _, k := range rs[i].nameKeys {
			if !seen[k] && !strings.HasPrefix(k, "/") {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	for i := range rs {
		for k := range rs[i].keys {
			if !seen[k] {
				seen[k] = true
				others = append(others, k)
			}
		}
	}
	sort.Strings(others)
	return append(names, others...)
}

// machine describes where the results were measured: the distinct cpu
// configuration values and goos/goarch pairs, each joined by " | ".
func machine(rs []result) (cpu, platform string) {
	var cpus, plats []string
	for i := range rs {
		r := &rs[i]
		if c := r.keys["cpu"]; c != "" && !slices.Contains(cpus, c) {
			cpus = append(cpus, c)
		}
		if r.keys["goos"] != "" || r.keys["goarch"] != "" {
			p := r.keys["goos"] + "/" + r.keys["goarch"]
			if !slices.Contains(plats, p) {
				plats = append(plats, p)
			}
		}
	}
	return strings.Join(cpus, " | "), strings.Join(plats, " | ")
}
