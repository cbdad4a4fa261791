// Command benchplot draws SVG and PNG plots of raw `go test -bench` output.
//
// It reads the Go benchmark format with golang.org/x/perf/benchfmt, so it
// understands sub-benchmark name keys (BenchmarkRead/size=64/mode=peek-2),
// units, -count repetitions and configuration lines (goos, goarch, cpu, pkg),
// from one or several files. Every point is the median of its repetitions,
// with a bar from the smallest to the largest.
//
// Three kinds of plot:
//
//   - line: x is a numeric name key (-x size), y a unit (-y Mrec/s),
//     one line per value of -series.
//   - bar: grouped bars, x categories are the values of a key (-x case),
//     one bar per value of -series in each group.
//   - scatter: one labelled point per value of -series, x and y are two
//     units (-x consumer-ms/s -y p99-µs).
//
// Example:
//
//	go test -run '^$' -bench Read -count 6 ./ringbuf > results.txt
//	go run ./internal/benchplot -kind line -in results.txt -x size -y Mrec/s \
//		-series mode -filter touch=head -logx -note "kernel 6.12" -out plots/read
//
// writes plots/read.svg and plots/read.png.
//
// Keys that -x, -series and -filter may name: the name keys, the
// configuration keys (goos, goarch, cpu, pkg, and .file, the input file),
// .name (the benchmark name without "Benchmark" and sub-benchmark parts),
// .fullname (the whole name without "Benchmark" and the -GOMAXPROCS
// suffix) and .procs (that suffix). Units are written as in the input (ns/op, MB/s) or as
// benchfmt normalises them (sec/op, B/s).
//
// A group of results whose median is plotted must repeat one measurement:
// if they differ in another name key, the benchmark name, GOMAXPROCS or
// package, benchplot says so and names the key to -filter on.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"gonum.org/v1/plot/vg"
)

// listFlag is a flag that may be given several times.
type listFlag []string

// String implements flag.Value.
func (l *listFlag) String() string { return strings.Join(*l, " ") }

// Set implements flag.Value.
func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// main runs the command, exiting 2 with the error on stderr if it fails.
func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(2)
	}
}

// run is the whole command: it parses args, reads the results and writes
// the plot, reporting the written files on stdout and warnings on stderr.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchplot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		in, filters listFlag
		opts        options
		width       = fs.Float64("width", 8, "image `inches` wide")
		height      = fs.Float64("height", 5, "image `inches` high")
	)
	fs.Var(&in, "in", "benchmark output `file`, or label=file to name it in .file (repeatable; also taken from arguments; - or none is stdin)")
	fs.StringVar(&opts.kind, "kind", "line", "plot `kind`: line, bar or scatter")
	fs.StringVar(&opts.x, "x", "", "line, bar: name `key` for the x axis; scatter: unit for the x axis")
	fs.StringVar(&opts.y, "y", "", "`unit` for the y axis, e.g. ns/op, Mrec/s")
	fs.StringVar(&opts.series, "series", "", "`key` whose values are the lines, the bars in each x group, or the scatter points (scatter default .fullname)")
	fs.Var(&filters, "filter", "keep results with `key=value` (repeatable or comma-separated; one key given twice means either value)")
	fs.BoolVar(&opts.logx, "logx", false, "log-scale x axis (line, scatter)")
	fs.BoolVar(&opts.logy, "logy", false, "log-scale y axis (line, scatter)")
	fs.StringVar(&opts.title, "title", "", "plot `title` (default: benchmark names and axes)")
	fs.StringVar(&opts.xlabel, "xlabel", "", "x axis `label` (default: the key or unit)")
	fs.StringVar(&opts.ylabel, "ylabel", "", "y axis `label` (default: the unit)")
	fs.StringVar(&opts.note, "note", "", "free `text` for the caption, e.g. the kernel version")
	fs.StringVar(&opts.out, "out", "benchplot", "output path `prefix`: writes prefix.svg and prefix.png")
	fs.IntVar(&opts.dpi, "dpi", 150, "PNG resolution in dots per inch")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./internal/benchplot -kind line|bar|scatter -x ... -y ... [flags] [file ...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	in = append(in, fs.Args()...)
	f, err := parseFilters(filters)
	if err != nil {
		return err
	}
	opts.filters = f
	if *width < 2 || *height < 1.5 || *width > 100 || *height > 100 {
		return fmt.Errorf("-width %g -height %g: want 2–100 by 1.5–100 inches", *width, *height)
	}
	if opts.dpi < 20 || opts.dpi > 1200 {
		return fmt.Errorf("-dpi %d: want 20–1200", opts.dpi)
	}
	opts.width, opts.height = vg.Length(*width)*vg.Inch, vg.Length(*height)*vg.Inch
	opts.out = strings.TrimSuffix(strings.TrimSuffix(opts.out, ".svg"), ".png")

	rs, err := readFiles(in)
	if err != nil {
		return err
	}
	for i, w := range rs.warnings {
		if i == 5 {
			fmt.Fprintf(stderr, "benchplot: and %d more unreadable lines\n", len(rs.warnings)-i)
			break
		}
		fmt.Fprintln(stderr, "benchplot: skipped:", w)
	}
	fig, err := build(rs, opts)
	if err != nil {
		return err
	}
	paths, err := fig.write(opts.out, opts.width, opts.height, opts.dpi)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, strings.Join(paths, "\n"))
	return nil
}
