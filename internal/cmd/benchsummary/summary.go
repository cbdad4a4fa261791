//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

// A column of the summary: the multiple of base that mode reaches, as
// benchstat says; filter narrows the section's filter for this column
// alone, and label, where set, heads it instead of mode.
type column struct {
	mode, base    string
	filter, label string
	hidden        bool // weighed by the verdict, not printed
}

// id names the column's cells.
func (c column) id() string { return c.mode + "/" + c.base + "|" + c.filter }

// A section is one summary table: benchstat's filter and projections,
// and the columns, each a mode against a base, all values of key.
type section struct {
	title      string
	filter     string
	table, row string
	key        string
	cols       []column
	rowHeader  string
	baseNames  map[string]string // short names of the bases for the header
	verdict    func(s *section, cells map[cellKey]cell) []string
	// unitRows labels each row by its unit, for comparisons with one row
	// a unit (row .name).
	unitRows bool
	// files are the results files, where not the one summarized.
	files []string
	// sweep, where set, makes the section a sweep's (renderSweep): the
	// extremes across the sizes, not a table of verdicts.
	sweep *benchfamily.Sweep
}

// width is what the summary must fit: an 80-column terminal.
const width = 80

// render runs benchstat once a base and prints the section's tables, one
// per benchstat table (a touch variant, a receive batch), rows as
// benchstat orders them.
func (s *section) render(w io.Writer, benchstat []string, file string) error {
	files := s.files
	if files == nil {
		files = []string{file}
	}
	if s.sweep != nil {
		return s.renderSweep(w, benchstat, files)
	}
	// One benchstat call for each base and column filter.
	type call struct{ base, filter string }
	var calls []call
	for _, c := range s.cols {
		if !slices.Contains(calls, call{c.base, c.filter}) {
			calls = append(calls, call{c.base, c.filter})
		}
	}
	cells := map[cellKey]cell{}
	var rows []cellKey
	for _, cl := range calls {
		cmp := comparison{filter: strings.TrimSpace(s.filter + " " + cl.filter), table: s.table, row: s.row, key: s.key, cols: []string{cl.base}}
		for _, c := range s.cols {
			if c.base == cl.base && c.filter == cl.filter && !slices.Contains(cmp.cols, c.mode) {
				cmp.cols = append(cmp.cols, c.mode)
			}
		}
		got, order, err := benchstatCells(benchstat, files, cmp)
		if err != nil {
			return err
		}
		for k, v := range got {
			k.col = column{mode: k.col, base: cl.base, filter: cl.filter}.id()
			if s.unitRows {
				k.row, k.unit = k.unit, ""
			}
			cells[k] = v
		}
		for _, r := range order {
			if s.unitRows {
				r.row, r.unit = r.unit, ""
			}
			if !slices.Contains(rows, r) {
				rows = append(rows, r)
			}
		}
	}
	fmt.Fprintf(w, "%s\n", s.title)
	if len(rows) == 0 {
		fmt.Fprintln(w, "  (no results to compare)")
		return nil
	}

	// Column width: the longest of the labels and cells, at least 6, as
	// long as the table fits the terminal.
	rowWidth := utf8.RuneCountInString(s.rowHeader)
	for _, r := range rows {
		rowWidth = max(rowWidth, utf8.RuneCountInString(r.row))
	}
	shown := slices.DeleteFunc(slices.Clone(s.cols), func(c column) bool { return c.hidden })
	colWidth := 6
	for _, c := range shown {
		colWidth = max(colWidth, len(s.label(c)), len(s.baseName(c.base))+1)
	}
	colWidth = min(colWidth, (width-rowWidth-1)/len(shown)-1)

	var tables []string
	for _, r := range rows {
		t := r.table + "\x00" + r.unit
		if !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	for _, t := range tables {
		table, unit, _ := strings.Cut(t, "\x00")
		switch {
		case table != "" && unit != "":
			fmt.Fprintf(w, "\n%s  (%s)\n", strings.TrimPrefix(table, "/"), unit)
		case table != "" || unit != "":
			fmt.Fprintf(w, "\n%s%s\n", strings.TrimPrefix(table, "/"), unit)
		}
		fmt.Fprint(w, pad("", rowWidth))
		for _, c := range shown {
			fmt.Fprint(w, " ", pad(clip(s.label(c), colWidth), colWidth))
		}
		fmt.Fprintln(w)
		fmt.Fprint(w, pad(s.rowHeader, rowWidth))
		for _, c := range shown {
			fmt.Fprint(w, " ", pad(clip("/"+s.baseName(c.base), colWidth), colWidth))
		}
		fmt.Fprintln(w)
		for _, r := range rows {
			if r.table+"\x00"+r.unit != t {
				continue
			}
			fmt.Fprint(w, pad(r.row, rowWidth))
			for _, c := range shown {
				v, ok := cells[cellKey{table: r.table, unit: r.unit, row: r.row, col: c.id()}]
				text := "-"
				if ok {
					text = v.String()
				}
				fmt.Fprint(w, " ", padLeft(text, colWidth))
			}
			fmt.Fprintln(w)
		}
		if s.verdict != nil {
			var tcells = map[cellKey]cell{}
			for k, v := range cells {
				if k.table == table && k.unit == unit {
					tcells[k] = v
				}
			}
			for _, line := range wrap(s.verdict(s, tcells), width) {
				fmt.Fprintln(w, line)
			}
		}
	}
	return nil
}

// label heads column c.
func (s *section) label(c column) string {
	if c.label != "" {
		return c.label
	}
	return s.baseName(c.mode)
}

// baseName is the short name of a mode in headers and verdicts.
func (s *section) baseName(base string) string {
	if n, ok := s.baseNames[base]; ok {
		return n
	}
	return base
}

// span says how column c fared across the rows of cells: the range of
// its significant multiples and how many rows showed no significant
// difference, as "1.46-8.36x" or "1.02-1.25x, ~ in 6 of 16".
func span(cells map[cellKey]cell, col string) (string, bool) {
	var lo, hi float64
	n, level, sig := 0, 0, 0
	for k, v := range cells {
		if k.col != col {
			continue
		}
		n++
		r, ok := v.ratio()
		if !ok {
			level++
			continue
		}
		if sig == 0 || r < lo {
			lo = r
		}
		if sig == 0 || r > hi {
			hi = r
		}
		sig++
	}
	switch {
	case n == 0:
		return "", false
	case sig == 0:
		return fmt.Sprintf("no significant difference in %d rows", n), true
	}
	text := ratioRange(lo, hi)
	if level > 0 {
		text += fmt.Sprintf(", ~ in %d of %d", level, n)
	}
	return text, true
}

// ratioRange formats lo to hi as "0.84-0.91x", or one multiple where
// both read the same.
func ratioRange(lo, hi float64) string {
	if formatRatio(lo) == formatRatio(hi) {
		return formatRatio(lo)
	}
	return strings.TrimSuffix(formatRatio(lo), "x") + "-" + formatRatio(hi)
}

// columnVerdict is the default verdict: one line a column, its span.
func columnVerdict(s *section, cells map[cellKey]cell) []string {
	var lines []string
	for _, c := range s.cols {
		if text, ok := span(cells, c.id()); ok {
			lines = append(lines, fmt.Sprintf("  %s against %s: %s", s.label(c), s.baseName(c.base), text))
		}
	}
	return lines
}

// wrap breaks lines longer than width at spaces, indenting what follows.
func wrap(lines []string, width int) []string {
	var out []string
	for _, line := range lines {
		for utf8.RuneCountInString(line) > width {
			cut := strings.LastIndex(line[:width], " ")
			if cut <= 4 {
				break
			}
			out = append(out, line[:cut])
			line = "    " + line[cut+1:]
		}
		out = append(out, line)
	}
	return out
}

// clip shortens s to n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func pad(s string, n int) string {
	if l := utf8.RuneCountInString(s); l < n {
		return s + strings.Repeat(" ", n-l)
	}
	return s
}

func padLeft(s string, n int) string {
	if l := utf8.RuneCountInString(s); l < n {
		return strings.Repeat(" ", n-l) + s
	}
	return s
}
