//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os/exec"
	"slices"
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
	out, err := benchstatCSV(benchstat, files, c)
	if err != nil {
		return nil, nil, err
	}
	return parseCSV(out)
}

// benchstatCSV runs benchstat -format csv on files for comparison c.
func benchstatCSV(benchstat []string, files []string, c comparison) ([]byte, error) {
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
		return nil, fmt.Errorf("%s %s: %v: %s", benchstat[0], strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// A csvBlock is one table of benchstat's CSV: its title (the -table
// value, "" without one), its two header lines (the columns, then the
// unit, CI, "vs base" and P of each) and its rows, the geomean left out.
type csvBlock struct {
	table       string
	cols, units []string
	rows        [][]string
}

// csvBlocks reads benchstat's CSV: blocks of a title line, two header
// lines and one line a row, ending with the geomean.
func csvBlocks(data []byte) ([]csvBlock, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("benchstat csv: %w", err)
	}
	var blocks []csvBlock
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
		b := csvBlock{table: table, cols: rec, units: records[i+1]}
		i++
		for ; i+1 < len(records) && len(records[i+1]) > 1 && records[i+1][0] != ""; i++ {
			if row := records[i+1]; row[0] != "geomean" {
				b.rows = append(b.rows, row)
			}
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// parseCSV reads benchstat's verdicts from its CSV: every non-base cell,
// and the row labels in benchstat's order per table.
func parseCSV(data []byte) (map[cellKey]cell, []cellKey, error) {
	blocks, err := csvBlocks(data)
	if err != nil {
		return nil, nil, err
	}
	cells := map[cellKey]cell{}
	var rows []cellKey
	seen := map[cellKey]bool{}
	for _, b := range blocks {
		for _, row := range b.rows {
			for j := 1; j < len(row) && j < len(b.units); j++ {
				if b.units[j] != "vs base" || j+1 >= len(row) {
					continue
				}
				// The column's name heads its value field: two to the left
				// of "vs base" (value, CI, vs base, P).
				col := b.cols[j-2]
				k := cellKey{table: b.table, unit: b.units[j-2], row: row[0], col: col}
				cells[k] = cell{vsBase: row[j], p: row[j+1]}
				rk := cellKey{table: b.table, unit: b.units[j-2], row: row[0]}
				if !seen[rk] {
					seen[rk] = true
					rows = append(rows, rk)
				}
			}
		}
	}
	return cells, rows, nil
}

// parseCenters reads benchstat's center values (its medians) from its
// CSV: every column's, the base's too, by table, unit, row and column;
// and the tables in benchstat's order.
func parseCenters(data []byte) (map[cellKey]float64, []string, error) {
	blocks, err := csvBlocks(data)
	if err != nil {
		return nil, nil, err
	}
	centers := map[cellKey]float64{}
	var tables []string
	for _, b := range blocks {
		if !slices.Contains(tables, b.table) {
			tables = append(tables, b.table)
		}
		for _, row := range b.rows {
			for j := 1; j < len(row) && j < len(b.cols) && j < len(b.units); j++ {
				if b.cols[j] == "" {
					continue // CI, vs base, P: a column's name heads its value only
				}
				v, err := strconv.ParseFloat(row[j], 64)
				if err != nil {
					continue // no result of that column in this row
				}
				centers[cellKey{table: b.table, unit: b.units[j], row: row[0], col: b.cols[j]}] = v
			}
		}
	}
	return centers, tables, nil
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
