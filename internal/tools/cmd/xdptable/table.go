package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// column is one column of a table: a header and how to show a row's
// value.
type column struct {
	header string
	unit   string                         // metric to show the median of
	show   func(r *row, v float64) string // nil: a number with digits decimals
	digits int
}

// studyColumns are the study's columns (throughput, loss, CPU) plus
// latency percentiles and CPU per packet.
var studyColumns = []column{
	{header: "offered pps", unit: "offered-pps"},
	{header: "delivered pps", unit: "delivered-pps"},
	{header: "lost %", unit: "lost-%", digits: 3},
	{header: "e2e lost %", unit: "e2e-lost-%", digits: 3},
	{header: "p50 µs", unit: "p50-us", digits: 1},
	{header: "p99 µs", unit: "p99-us", digits: 1},
	{header: "p99.9 µs", unit: "p999-us", digits: 0},
	{header: "max µs", unit: "max-us", digits: 0},
	{header: "BPF ns/pkt", unit: "bpf-ns/pkt"},
	{header: "BPF CPU %", unit: "bpf-ms/s", show: percentOfCore},
	{header: "consumer usr ms/s", unit: "usr-ms/s", digits: 1},
	{header: "consumer sys ms/s", unit: "sys-ms/s", digits: 1},
	{header: "consumer CPU %", unit: "", show: consumerPercent},
	{header: "CPU ms/Mpkt", unit: "cpu-ms/Mpkt"},
}

// lossColumns are the loss sweep's columns.
var lossColumns = []column{
	{header: "offered pps", unit: "offered-pps"},
	{header: "seen by XDP pps", unit: "xdp-pps"},
	{header: "delivered pps", unit: "delivered-pps"},
	{header: "lost %", unit: "lost-%", digits: 3},
	{header: "e2e lost %", unit: "e2e-lost-%", digits: 3},
	{header: "veth drop %", unit: "veth-drop-%", digits: 3},
	{header: "p99 µs", unit: "p99-us", digits: 0},
	{header: "BPF ns/pkt", unit: "bpf-ns/pkt"},
	{header: "consumer CPU %", unit: "", show: consumerPercent},
	{header: "CPU ms/Mpkt", unit: "cpu-ms/Mpkt"},
}

func percentOfCore(_ *row, msPerSec float64) string {
	return strconv.FormatFloat(msPerSec/10, 'f', 1, 64)
}

func consumerPercent(r *row, _ float64) string {
	usr, ok1 := r.median("usr-ms/s")
	sys, ok2 := r.median("sys-ms/s")
	if !ok1 || !ok2 {
		return "–"
	}
	return strconv.FormatFloat((usr+sys)/10, 'f', 1, 64)
}

// writeTable writes the rows whose name starts with prefix as a Markdown
// table, labelled by label(row).
func writeTable(w io.Writer, res *results, prefix, first string, label func(*row) string, cols []column) int {
	var rows []*row
	for _, r := range res.rows {
		if strings.HasPrefix(r.name, prefix) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return 0
	}
	headers := []string{first, "runs"}
	for _, c := range cols {
		headers = append(headers, c.header)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(headers, " | "), strings.Repeat(" --- |", len(headers)))
	for _, r := range rows {
		cells := []string{label(r), strconv.Itoa(r.runs)}
		for _, c := range cols {
			cells = append(cells, cell(r, c))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	return len(rows)
}

func cell(r *row, c column) string {
	var v float64
	if c.unit != "" {
		var ok bool
		if v, ok = r.median(c.unit); !ok {
			return "–"
		}
	}
	if c.show != nil {
		return c.show(r, v)
	}
	return strconv.FormatFloat(v, 'f', c.digits, 64)
}
