// Command xdptable prints the XDP benchmark's results as tables in the
// layout of the study it reproduces: one row per consumer strategy with
// throughput, loss, latency percentiles and CPU, each the median of the
// runs (-count), then the perf-versus-ring-buffer loss sweep.
//
//	go -C internal/tools run ./cmd/xdptable -in results/xdp-20250101-120000.txt
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	in := flag.String("in", "", "benchmark output file (default: standard input)")
	flag.Parse()
	r := io.Reader(os.Stdin)
	if *in != "" {
		f, err := os.Open(*in)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		r = f
	}
	if err := run(r, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "xdptable:", err)
		os.Exit(1)
	}
}

func run(r io.Reader, w io.Writer) error {
	res, err := parse(r)
	if err != nil {
		return err
	}
	var keys []string
	for k := range res.config {
		if strings.HasPrefix(k, "xdp-") || k == "cpu" || k == "goos" || k == "kernel" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s: %s  \n", k, res.config[k])
	}
	fmt.Fprintln(w)
	n := writeTable(w, res, "XDP/strategy=", "strategy", func(r *row) string { return r.key("strategy") }, studyColumns)
	if n > 0 {
		fmt.Fprintln(w)
	}
	m := writeTable(w, res, "XDPLoss/", "offered pps / strategy",
		func(r *row) string { return r.key("pps") + " " + r.key("strategy") }, lossColumns)
	if n+m == 0 {
		return fmt.Errorf("no BenchmarkXDP results in the input")
	}
	return nil
}
