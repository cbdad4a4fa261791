//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// A comparison is one benchstat call: its -filter, -table and -row
// projections, and the columns, base first.
type comparison struct {
	filter, table, row string
	key                string   // the column key, "/mode"
	cols               []string // its values, the base first
}

// A cell is benchstat's verdict on one column against the base in one
// row: its "vs base" field ("+7.93%", or "~" where the difference is not
// significant) and its P field.
type cell struct {
	vsBase, p string
}

// cellKey names a cell: the table (benchstat's -table title, "" without
// one), the unit, the row label and the column's value of the key.
type cellKey struct {
	table, unit, row, col string
}

// benchstatCells runs benchstat -format csv on files and returns every
// non-base cell, and the row labels in benchstat's order per table.
func benchstatCells(benchstat []string, files []string, c comparison) (map[cellKey]cell, []cellKey, error) {
	args := append(append([]string(nil), benchstat[1:]...), "-format", "csv", "-filter", c.filter, "-row", c.row,
		"-col", c.key+"@("+strings.Join(c.cols, " ")+")")
	if c.table != "" {
		args = append(args, "-table", c.table)
	}
	args = append(args, files...)
	cmd := exec.Command(benchstat[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %v: %s", benchstat[0], strings.Join(args, " "), err, stderr.String())
	}
	return parseCSV(stdout.Bytes())
}

// parseCSV reads benchstat's CSV: blocks of a title line, two header
// lines (the columns, then the unit, CI, "vs base" and P of each) and one
// line a row, ending with the geomean.
func parseCSV(data []byte) (map[cellKey]cell, []cellKey, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("benchstat csv: %w", err)
	}
	cells := map[cellKey]cell{}
	var rows []cellKey
	seen := map[cellKey]bool{}
	table := ""
	for i := 0; i < len(records); i++ {
		rec := records[i]
		if len(rec) == 1 {
			if strings.HasPrefix(rec[0], "/") || strings.HasPrefix(rec[0], ".") {
				table = rec[0]
			}
			continue
		}
		if len(rec) < 2 || rec[0] != "" || i+1 >= len(records) {
			continue
		}
		cols, units := rec, records[i+1]
		i++
		for ; i+1 < len(records) && len(records[i+1]) > 1 && records[i+1][0] != ""; i++ {
			row := records[i+1]
			if row[0] == "geomean" {
				continue
			}
			for j := 1; j < len(row) && j < len(units); j++ {
				if units[j] != "vs base" || j+1 >= len(row) {
					continue
				}
				// The column's name heads its value field: two to the left
				// of "vs base" (value, CI, vs base, P).
				col := cols[j-2]
				k := cellKey{table: table, unit: units[j-2], row: row[0], col: col}
				cells[k] = cell{vsBase: row[j], p: row[j+1]}
				rk := cellKey{table: table, unit: units[j-2], row: row[0]}
				if !seen[rk] {
					seen[rk] = true
					rows = append(rows, rk)
				}
			}
		}
	}
	return cells, rows, nil
}

// ratio turns benchstat's "vs base" into a multiple of the base: "+7.93%"
// is 1.08x. It formats benchstat's own number and computes nothing else;
// "~" (no significant difference) stays "~".
func (c cell) ratio() (float64, bool) {
	s := strings.TrimSuffix(c.vsBase, "%")
	if s == c.vsBase {
		return 0, false
	}
	pct, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return 1 + pct/100, true
}

// String is the cell as the summary shows it: a multiple, "~", or "?"
// where benchstat gave no verdict (too few runs).
func (c cell) String() string {
	if r, ok := c.ratio(); ok {
		return formatRatio(r)
	}
	if c.vsBase == "~" {
		return "~"
	}
	return "?"
}

func formatRatio(r float64) string {
	if r >= 9.95 {
		return fmt.Sprintf("%.1fx", r)
	}
	return fmt.Sprintf("%.2fx", r)
}
