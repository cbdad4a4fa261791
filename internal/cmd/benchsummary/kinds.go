package main

import (
	"fmt"
	"slices"
	"strings"
)

// kinds build each target's sections from the values its results hold.
var kinds = map[string]func(benchValues) []*section{
	"ringbuf":    func(v benchValues) []*section { return ringbufSections(v, "Read") },
	"k2u":        k2uSections,
	"xdp":        xdpSections,
	"sockfilter": sockfilterSections,
	"rings":      ringsSections,
	"perf":       perfSections,
}

// ringbufReferences are BenchmarkRead's modes that are not our reader
// (and bench-upstream's, lease-batch); every other mode in the results
// is ours.
var ringbufReferences = []string{"upstream", "lease", "lease-batch", "lease-each", "floor", "libbpf"}

// ringbufSections: each of our modes against upstream's ReadInto, then
// records (and any of our modes beyond copy, peek and records, such as
// batch) against the lease technique, the floor and libbpf.
// bench is the benchmark's name: Read, or Drain for bench-upstream's.
func ringbufSections(v benchValues, bench string) []*section {
	var ours []string
	for _, m := range v[bench]["mode"] {
		if !slices.Contains(ringbufReferences, m) {
			ours = append(ours, m)
		}
	}
	has := func(m string) bool { return v.has(bench, "mode", m) }
	var cols []column
	if has("upstream") {
		for _, m := range ours {
			cols = append(cols, column{mode: m, base: "upstream"})
		}
	}
	for _, m := range ours {
		if m == "copy" || m == "peek" {
			continue
		}
		for _, base := range []string{"lease", "lease-batch", "floor", "libbpf"} {
			if has(base) && (m == "records" || !strings.HasPrefix(base, "lease")) {
				cols = append(cols, column{mode: m, base: base})
			}
		}
	}
	sections := []*section{{
		title:     "Drain rate (Mrec/s) as a multiple of the mode under /: upstream is cilium/ebpf\nv0.22's ReadInto; lease its main branch's technique; floor the fastest Go loop.",
		filter:    ".name:" + bench + " .unit:Mrec/s",
		table:     "/touch",
		row:       "/size",
		rowHeader: "size B",
		key:       "/mode",
		cols:      cols,
		baseNames: map[string]string{"upstream": "up", "lease-each": "lease-e", "lease-batch": "lease-b"},
		verdict:   ringbufVerdict,
	}}
	if v["Write"] != nil {
		var cols []column
		for _, c := range []column{{mode: "reserve", base: "libbpf"}, {mode: "write", base: "libbpf"}, {mode: "reserve-x2", base: "reserve"}, {mode: "batch", base: "libbpf"}, {mode: "batch-x2", base: "batch"}} {
			if v.has("Write", "mode", c.mode) && v.has("Write", "mode", c.base) {
				cols = append(cols, c)
			}
		}
		sections = append(sections, &section{
			title:     "User ring buffer writer, records written then drained (Mrec/s): Reserve/Submit,\nWrite and ReserveBatch against libbpf's reserve/submit, two goroutines against one.",
			filter:    ".name:Write .unit:Mrec/s",
			row:       "/size",
			rowHeader: "size B",
			key:       "/mode",
			cols:      cols,
			verdict:   columnVerdict,
		})
	}
	if v["EndToEnd"] != nil {
		sections = append(sections, &section{
			title:     "End to end, Records: polling (NO_WAKEUP) against a wakeup a record.",
			filter:    ".name:EndToEnd .unit:Mrec/s",
			row:       "/size",
			rowHeader: "size B",
			key:       "/wake",
			cols:      []column{{mode: "poll", base: "wakeup"}},
			verdict:   columnVerdict,
		})
	}
	return sections
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

// presentCols are the columns of key's values in bench's results other
// than base, in the order given and then any others the results hold.
func presentCols(v benchValues, bench, key, base string, order []string) []column {
	var cols []column
	if !v.has(bench, key, base) {
		return nil
	}
	values := append([]string(nil), order...)
	for _, x := range v[bench][key] {
		if !slices.Contains(values, x) {
			values = append(values, x)
		}
	}
	for _, x := range values {
		if x != base && v.has(bench, key, x) {
			cols = append(cols, column{mode: x, base: base})
		}
	}
	return cols
}

// perfSections: bench-perf's drain, each of our modes against
// cilium/ebpf's perf ReadInto (upstream), then Records (and any mode
// beyond copy) against our ReadInto (copy), one table per touch variant.
func perfSections(v benchValues) []*section {
	var cols []column
	if v.has("Read", "mode", "upstream") {
		for _, m := range v["Read"]["mode"] {
			if m != "upstream" {
				cols = append(cols, column{mode: m, base: "upstream"})
			}
		}
	}
	if v.has("Read", "mode", "copy") {
		for _, m := range v["Read"]["mode"] {
			if m != "upstream" && m != "copy" {
				cols = append(cols, column{mode: m, base: "copy"})
			}
		}
	}
	return []*section{{
		title:     "Perf drain rate (Mrec/s) as a multiple of the mode under /: up is cilium/ebpf\nv0.22's perf ReadInto, copy our ReadInto; rows by event size.",
		filter:    ".name:Read .unit:Mrec/s",
		table:     "/touch",
		row:       "/size",
		rowHeader: "size B",
		key:       "/mode",
		cols:      cols,
		baseNames: map[string]string{"upstream": "up"},
		verdict:   columnVerdict,
	}}
}

func k2uSections(v benchValues) []*section {
	names := map[string]string{
		"upstream-readinto": "up", "perf-readinto": "perf", "lookup-delete": "queue",
		"batch-lookup-delete": "queue-b", "readinto": "readinto", "records": "records",
	}
	order := []string{"records", "readinto", "perf-readinto", "lookup-delete", "batch-lookup-delete"}
	cols := presentCols(v, "K2U", "reader", "upstream-readinto", order)
	return []*section{{
		title:     "Events delivered per second, producer flat out, as a multiple of upstream's\nring buffer ReadInto (up).",
		filter:    ".name:K2U /rate:max .unit:events/s",
		row:       "/size",
		rowHeader: "size B",
		key:       "/reader",
		cols:      cols,
		baseNames: names,
		verdict:   columnVerdict,
	}, {
		title:     "Consumer CPU per million events at 1M events/s offered (lower is better).",
		filter:    ".name:K2U /rate:1000000 .unit:cons-ms/Mevent",
		row:       "/size",
		rowHeader: "size B",
		key:       "/reader",
		cols:      cols,
		baseNames: names,
		verdict:   columnVerdict,
	}}
}

func xdpSections(v benchValues) []*section {
	var pairs []column
	for _, ours := range v["XDP"]["strategy"] {
		if base := ours + "-upstream"; v.has("XDP", "strategy", base) {
			pairs = append(pairs, column{mode: ours, base: base})
		}
	}
	sections := []*section{{
		title:     "Our Records against upstream's ReadInto, same consumer strategy.",
		filter:    ".name:XDP .unit:(delivered-pps OR p99-us OR cons-ms/s)",
		row:       ".name",
		rowHeader: "unit",
		key:       "/strategy",
		cols:      pairs,
		unitRows:  true,
		baseNames: map[string]string{"rb-epoll-upstream": "upstream", "rb-sleep-50us-upstream": "upstream"},
		verdict:   columnVerdict,
	}}
	if v["XDPLoss"] != nil {
		sections = append(sections, &section{
			title:     "Loss sweep: packets delivered, ring buffer against perf, by offered rate.",
			filter:    ".name:XDPLoss .unit:delivered-pps",
			row:       "/pps",
			rowHeader: "pps",
			key:       "/strategy",
			cols:      presentCols(v, "XDPLoss", "strategy", "perf-epoll", nil),
			verdict:   columnVerdict,
		})
	}
	return sections
}

func sockfilterSections(v benchValues) []*section {
	return []*section{{
		title:     "Useful bytes/s with the socket filter on, as a multiple of off; rows by good\npayload (B) and bad clients per good one.",
		filter:    ".name:SocketFilter .unit:good-B/s",
		table:     "/recv",
		row:       "/payload,/bad",
		rowHeader: "payload bad",
		key:       "/filter",
		cols:      presentCols(v, "SocketFilter", "filter", "off", nil),
		verdict:   columnVerdict,
	}}
}

func ringsSections(v benchValues) []*section {
	var sections []*section
	if v["Rings"] != nil {
		sections = append(sections, &section{
			title:     "Producer CPU per event with a ring per CPU, as a multiple of one shared\nring (lower is better); rows by producers, size (B) and flags.",
			filter:    ".name:Rings .unit:ns/event",
			row:       "/producers,/size,/flags",
			rowHeader: "producers size flags",
			key:       "/layout",
			cols:      presentCols(v, "Rings", "layout", "shared", nil),
			verdict:   columnVerdict,
		})
	}
	if v["MultiRecords"] != nil {
		sections = append(sections, &section{
			title:     "Reading: MultiReader over 2 and 4 rings against 1 ring of the same total.",
			filter:    ".name:MultiRecords /reader:MultiReader .unit:Mrec/s",
			row:       "/size",
			rowHeader: "size B",
			key:       "/rings",
			cols:      presentCols(v, "MultiRecords", "rings", "1", nil),
			verdict:   columnVerdict,
		})
	}
	return sections
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
		if vb.has("Drain", "mode", m) {
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
	for _, s := range ringbufSections(vh, "Drain") {
		if s.key == "/mode" {
			s.title = "At the head, drain rate (Mrec/s) as a multiple of the mode under /: up is\ncilium/ebpf's ReadInto, lease-b its RawReader with one Commit a drain."
		}
		s.files = []string{head}
		sections = append(sections, s)
	}
	return sections, nil
}
