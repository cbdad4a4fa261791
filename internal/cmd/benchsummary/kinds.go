//go:build linux

package main

import (
	"fmt"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

// familySections are the sections of family's summary that the results
// holding v have, as internal/benchfamily declares them.
func familySections(family *benchfamily.Family, v benchfamily.Values) []*section {
	var out []*section
	for _, s := range family.Sections(v) {
		out = append(out, newSection(s, v))
	}
	return out
}

// newSection is the section s declares, with the columns the results
// holding v have.
func newSection(s benchfamily.Section, v benchfamily.Values) *section {
	sec := &section{
		title:     s.Title,
		filter:    s.Filter,
		table:     s.Table,
		row:       s.Row,
		key:       s.Key,
		rowHeader: s.RowHeader,
		baseNames: s.BaseNames,
		unitRows:  s.UnitRows,
		verdict:   columnVerdict,
		sweep:     s.Sweep,
	}
	if s.Verdict == benchfamily.AgainstReferences {
		sec.verdict = ringbufVerdict
	}
	for _, c := range s.ColumnsOf(v) {
		sec.cols = append(sec.cols, column{mode: c.Mode, base: c.Base, filter: c.Filter, label: c.Label, hidden: c.Hidden})
	}
	return sec
}

// tally counts how column col fared: faster, level (~) and slower rows,
// and the range of the significant multiples.
type tally struct {
	faster, level, slower, rows int
	lo, hi                      float64
}

func tallyOf(cells map[cellKey]cell, col string) tally {
	var t tally
	for k, c := range cells {
		if k.col != col {
			continue
		}
		t.rows++
		r, ok := c.ratio()
		switch {
		case !ok:
			t.level++
			continue
		case r > 1:
			t.faster++
		default:
			t.slower++
		}
		if t.faster+t.slower == 1 || r < t.lo {
			t.lo = r
		}
		if t.faster+t.slower == 1 || r > t.hi {
			t.hi = r
		}
	}
	return t
}

// ringbufVerdict: at how many sizes each of our modes beats upstream and
// by how much at most, then a line for each mode compared with the
// references: the range of its significant multiples of each, and at how
// many sizes benchstat saw no difference (~).
func ringbufVerdict(s *section, cells map[cellKey]cell) []string {
	var up []string
	refs := map[string][]string{}
	var order []string
	for _, c := range s.cols {
		t := tallyOf(cells, c.id())
		if t.rows == 0 {
			continue
		}
		if c.base == "upstream" {
			text := fmt.Sprintf("%s %d/%d", c.mode, t.faster, t.rows)
			if t.faster > 0 {
				text += fmt.Sprintf(" (≤%s)", formatRatio(t.hi))
			}
			up = append(up, text)
			continue
		}
		text := c.base + " "
		switch {
		case t.level == t.rows:
			text += "~"
		case t.faster+t.slower == 0:
			text += "?"
		default:
			text += ratioRange(t.lo, t.hi)
		}
		if t.level > 0 && t.level < t.rows {
			text += fmt.Sprintf(" (~%d)", t.level)
		}
		if refs[c.mode] == nil {
			order = append(order, c.mode)
		}
		refs[c.mode] = append(refs[c.mode], text)
	}
	var lines []string
	if len(up) > 0 {
		lines = append(lines, "Faster than upstream: "+strings.Join(up, ", "))
	}
	for _, m := range order {
		lines = append(lines, fmt.Sprintf("%s: %s", m, strings.Join(refs[m], ", ")))
	}
	return lines
}

// upstreamSections are bench-upstream's: each mode at the head as a
// multiple of the same mode at the base, then the head's modes as
// BenchmarkRead's are summarized. base and head are the results files.
func upstreamSections(base, head string) ([]*section, error) {
	vb, err := scanValues(base)
	if err != nil {
		return nil, err
	}
	vh, err := scanValues(head)
	if err != nil {
		return nil, err
	}
	var cols []column
	for _, m := range vh["Drain"]["mode"] {
		if vb.Has("Drain", "mode", m) {
			cols = append(cols, column{mode: head, base: base, filter: "/mode:" + m, label: m})
		}
	}
	sections := []*section{{
		title:     "Drain rate (Mrec/s) of each mode at the head as a multiple of the same mode at\nthe base.",
		filter:    ".name:Drain .unit:Mrec/s",
		table:     "/touch",
		row:       "/size",
		rowHeader: "size B",
		key:       ".file",
		cols:      cols,
		files:     []string{base, head},
		baseNames: map[string]string{base: "base"},
		verdict:   columnVerdict,
	}}
	for _, fs := range benchfamily.DrainSections("Drain") {
		s := newSection(fs, vh)
		if s.key == "/mode" {
			s.title = "At the head, drain rate (Mrec/s) as a multiple of the mode under /: up is\ncilium/ebpf's ReadInto, lease-b its RawReader with one Commit a drain."
		}
		s.files = []string{head}
		sections = append(sections, s)
	}
	return sections, nil
}
