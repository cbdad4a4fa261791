//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

// renderSweep prints a sweep section: for each of benchstat's tables (a
// touch), each mode's worst ratio to each base and where, how many sizes
// it is below the base at, and its largest fall of bandwidth from one
// size to the next. Every number is a ratio of benchstat's medians.
func (s *section) renderSweep(w io.Writer, benchstat, files []string) error {
	sw := s.sweep
	cols := slices.Clone(sw.Modes)
	for _, b := range sw.Bases {
		for _, m := range b.Modes {
			if !slices.Contains(cols, m) {
				cols = append(cols, m)
			}
		}
	}
	out, err := benchstatCSV(benchstat, files, comparison{filter: s.filter, table: s.table, row: s.row, key: s.key, cols: cols})
	if err != nil {
		return err
	}
	centers, order, err := parseCenters(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n", s.title)
	tables := sweepTables(centers, order)
	if len(tables) == 0 {
		fmt.Fprintln(w, "  (no results to compare)")
		return nil
	}
	for _, t := range tables {
		fmt.Fprintf(w, "\n%s\n", strings.TrimPrefix(t.name, "/"))
		for _, line := range t.lines(sw) {
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

// A sweepTable is one table's medians: median[mode][size].
type sweepTable struct {
	name   string
	sizes  []int
	median map[string]map[int]float64
}

// sweepTables groups benchstat's centers by table, in benchstat's order
// of the tables, sizes in order.
func sweepTables(centers map[cellKey]float64, order []string) []*sweepTable {
	byName := map[string]*sweepTable{}
	var tables []*sweepTable
	for k, v := range centers {
		size, err := strconv.Atoi(k.row)
		if err != nil {
			continue
		}
		t := byName[k.table]
		if t == nil {
			t = &sweepTable{name: k.table, median: map[string]map[int]float64{}}
			byName[k.table] = t
			tables = append(tables, t)
		}
		if t.median[k.col] == nil {
			t.median[k.col] = map[int]float64{}
		}
		t.median[k.col][size] = v
		if !slices.Contains(t.sizes, size) {
			t.sizes = append(t.sizes, size)
		}
	}
	slices.SortFunc(tables, func(a, b *sweepTable) int { return slices.Index(order, a.name) - slices.Index(order, b.name) })
	for _, t := range tables {
		slices.Sort(t.sizes)
	}
	return tables
}

// worst is a mode's lowest ratio to a base across the sizes both have,
// where it is, and at how many of them the mode is the slower.
type worst struct {
	ratio        float64
	size         int
	below, sizes int
}

// against is mode's worst ratio to base in t.
func (t *sweepTable) against(mode string, base benchfamily.SweepBase) (worst, bool) {
	w := worst{ratio: math.Inf(1)}
	for _, size := range t.sizes {
		v, ok := t.median[mode][size]
		if !ok {
			continue
		}
		best := 0.0
		for _, m := range base.Modes {
			best = max(best, t.median[m][size])
		}
		if best <= 0 {
			continue
		}
		r := v / best
		w.sizes++
		if r < 1 {
			w.below++
		}
		if r < w.ratio {
			w.ratio, w.size = r, size
		}
	}
	return w, w.sizes > 0
}

// fall is a drop of a mode's bandwidth (median rate times the record's
// stride) from one size to the next: from a size, to the next, the
// bandwidths there (for a step, the highest of the sizes after it) and
// the change.
type fall struct {
	from, to         int
	fromGBps, toGBps float64
	change           float64 // to/from - 1, negative for a fall
	found            bool
}

// largestFalls are mode's largest fall from one size to the next, from
// sw.FallsFrom on, and its largest step: a fall after which the next
// sw.StepSizes sizes all stay below the bandwidth before it, measured to
// the highest of them. One slow size, as a noisy run has, falls and
// comes back; a bound of a reader's walk steps down and stays.
func (t *sweepTable) largestFalls(mode string, sw *benchfamily.Sweep) (largest, step fall) {
	var sizes []int
	var bws []float64
	for _, size := range t.sizes {
		if v, ok := t.median[mode][size]; ok {
			sizes = append(sizes, size)
			// Mrec/s times bytes a record is MB/s; GB/s reads better.
			bws = append(bws, v*float64(sw.Stride(size))/1000)
		}
	}
	for i := 0; i+1 < len(sizes); i++ {
		if sizes[i] < sw.FallsFrom || bws[i] <= 0 {
			continue
		}
		if c := bws[i+1]/bws[i] - 1; c < largest.change {
			largest = fall{from: sizes[i], to: sizes[i+1], fromGBps: bws[i], toGBps: bws[i+1], change: c, found: true}
		}
		if i+sw.StepSizes >= len(sizes) {
			continue
		}
		after := slices.Max(bws[i+1 : i+1+sw.StepSizes])
		if c := after/bws[i] - 1; c < step.change {
			step = fall{from: sizes[i], to: sizes[i+1], fromGBps: bws[i], toGBps: after, change: c, found: true}
		}
	}
	return largest, step
}

// lines are the table's part of the summary.
func (t *sweepTable) lines(sw *benchfamily.Sweep) []string {
	const modeWidth, worstWidth, atWidth, belowWidth = 9, 6, 7, 8
	baseWidth := worstWidth + 1 + atWidth + 1 + belowWidth
	head1, head2 := pad("", modeWidth), pad("mode", modeWidth)
	for _, b := range sw.Bases {
		head1 += " " + pad(clip("against "+b.Label, baseWidth), baseWidth)
		head2 += " " + pad("worst", worstWidth) + " " + pad("at", atWidth) + " " + pad("below", belowWidth)
	}
	lines := []string{strings.TrimRight(head1, " "), strings.TrimRight(head2, " ")}
	var modes []string
	for _, m := range sw.Modes {
		if t.median[m] == nil {
			continue
		}
		modes = append(modes, m)
		line := pad(m, modeWidth)
		for _, b := range sw.Bases {
			w, ok := t.against(m, b)
			if !ok {
				line += " " + pad("-", baseWidth)
				continue
			}
			line += " " + padLeft(formatRatio(w.ratio), worstWidth) + " " + pad(fmt.Sprintf("%d B", w.size), atWidth) +
				" " + pad(fmt.Sprintf("%d/%d", w.below, w.sizes), belowWidth)
		}
		lines = append(lines, strings.TrimRight(line, " "))
	}
	largest := make([]fall, len(modes))
	steps := make([]fall, len(modes))
	for i, m := range modes {
		largest[i], steps[i] = t.largestFalls(m, sw)
	}
	lines = append(lines, fmt.Sprintf("Largest fall of bandwidth (median Mrec/s x stride) to the next size, from %d B:", sw.FallsFrom))
	lines = append(lines, fallLines(modes, largest, modeWidth-2)...)
	lines = append(lines, fmt.Sprintf("Largest step, a fall the next %d sizes stay below (to the highest of them):", sw.StepSizes))
	lines = append(lines, fallLines(modes, steps, modeWidth-2)...)
	return wrap(lines, width)
}

// fallLines are a line a mode of its fall.
func fallLines(modes []string, falls []fall, modeWidth int) []string {
	var lines []string
	for i, m := range modes {
		f := falls[i]
		if !f.found {
			lines = append(lines, fmt.Sprintf("  %s none", pad(m, modeWidth)))
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s %+.0f%% from %d to %d B (%.1f -> %.1f GB/s)",
			pad(m, modeWidth), 100*f.change, f.from, f.to, f.fromGBps, f.toGBps))
	}
	return lines
}
