//go:build linux

package benchfamily

import "slices"

// A Section is one table of a family's summary: benchstat's filter and
// projections, and its columns, each a value of Key as a multiple of a
// base value, which benchsummary (internal/cmd/benchsummary) prints with
// benchstat's verdict on each cell.
type Section struct {
	Title string
	// Bench names the benchmark (without "Benchmark") the results must
	// hold for the section to be printed; empty for always.
	Bench  string
	Filter string
	// Table, Row and Key are benchstat's -table, -row and the column
	// key (-col without its values): "/recv", "/payload,/bad", "/filter".
	Table, Row, Key string
	// RowHeader heads the rows' labels: "payload bad".
	RowHeader string
	// Base and Order give the columns: every value of Key in the results
	// of Bench against Base, those in Order first. Columns, where set,
	// gives them instead.
	Base    string
	Order   []string
	Columns func(Values) []Column
	// BaseNames are short names of values for the headers: "up".
	BaseNames map[string]string
	// UnitRows labels each row by its unit, for a row per unit (Row .name).
	UnitRows bool
	// Verdict is what is said under each table.
	Verdict Verdict
	// Sweep, where set, makes the section a sweep's: no table of
	// verdicts, but the extremes across Row's values (Table, Row and Key
	// as for a table; Columns unused).
	Sweep *Sweep
}

// A Sweep section sums up a benchmark run at many sizes with few runs a
// size, where benchstat's verdict on each row would be ~ throughout: from
// benchstat's medians (its center values), for each of Table's tables,
// the worst ratio of each mode to each base and the size where it is,
// and the largest fall of each mode's bandwidth from one size to the
// next, which a hole in the rate curve is; then the largest that lasts,
// a step, which one slow size of a noisy run is not.
type Sweep struct {
	// Modes are the values of Key judged.
	Modes []string
	// Bases are what the modes are divided by, each at every size.
	Bases []SweepBase
	// FallsFrom is the smallest size a fall is counted from: the walk
	// to the next size from there on.
	FallsFrom int
	// StepSizes is how many sizes after a fall must all stay below the
	// bandwidth before it for the fall to be a step.
	StepSizes int
	// Stride is the bytes a record of size bytes takes in the buffer:
	// bandwidth is rate times stride.
	Stride func(size int) int
}

// A SweepBase is a base of a sweep's ratios: at each size, the best
// median of Modes (the better of two readers a mode replaces).
type SweepBase struct {
	Label string
	Modes []string
}

// A Verdict is how a section's tables are summed up.
type Verdict int

const (
	// ByColumn says for each column the range of its significant
	// multiples and how many rows showed none.
	ByColumn Verdict = iota
	// AgainstReferences says at how many sizes each of our modes beats
	// upstream, then each mode's range against each reference: the drain
	// benchmark's.
	AgainstReferences
)

// A Column of a section: the multiple of Base that Mode reaches; Filter
// narrows the section's filter for this column alone, and Label, where
// set, heads it instead of Mode.
type Column struct {
	Mode, Base    string
	Filter, Label string
	// Hidden columns are not printed; the section's verdict weighs them.
	Hidden bool
}

// Values are the values of each key in each benchmark's names in a
// results file, in the order the file first shows them:
// values["Read"]["mode"].
type Values map[string]map[string][]string

// Has reports whether benchmark bench has value v of key.
func (v Values) Has(bench, key, value string) bool { return slices.Contains(v[bench][key], value) }

// ColumnsOf are the section's columns for results holding v: Columns's,
// or every value of Key against Base.
func (s Section) ColumnsOf(v Values) []Column {
	if s.Columns != nil {
		return s.Columns(v)
	}
	return v.Against(s.Bench, s.Key, s.Base, s.Order)
}

// Against are the columns of key's values in bench's results other than
// base, as multiples of base: those in order first, then any others the
// results hold; none where the results lack base.
func (v Values) Against(bench, key, base string, order []string) []Column {
	key = trimSlash(key)
	if !v.Has(bench, key, base) {
		return nil
	}
	values := slices.Clone(order)
	for _, x := range v[bench][key] {
		if !slices.Contains(values, x) {
			values = append(values, x)
		}
	}
	var cols []Column
	for _, x := range values {
		if x != base && v.Has(bench, key, x) {
			cols = append(cols, Column{Mode: x, Base: base})
		}
	}
	return cols
}

func trimSlash(key string) string {
	if len(key) > 0 && key[0] == '/' {
		return key[1:]
	}
	return key
}

// Sections are the family's summary sections that the results hold.
func (f *Family) Sections(v Values) []Section {
	var out []Section
	for _, s := range f.Summary {
		if s.Bench == "" || v[s.Bench] != nil {
			out = append(out, s)
		}
	}
	return out
}
