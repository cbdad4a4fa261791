// Command benchplot draws SVG and PNG plots of raw `go test -bench` output.
//
// It speaks benchstat's language: it reads the Go benchmark format with
// golang.org/x/perf/benchfmt (sub-benchmark keys, units, -count
// repetitions, configuration lines, several files), selects with a
// benchstat filter (-filter '.name:Read /touch:head'), groups with
// benchstat projections (-x /size, -series '/mode@(upstream copy)') and
// summarises each point as benchstat does, with golang.org/x/perf's
// benchproc and benchmath: the median, and a bar over its 95 % confidence
// interval, or over the smallest to the largest value where there are too
// few runs for one (fewer than 6).
//
// Three kinds of plot:
//
//   - line: x is a numeric projection (-x /size), y a unit (-y Mrec/s),
//     one line per value of -series. A line of 24 points or more (a
//     sweep) shows its spread as a pale band rather than a bar at each
//     point, which would hide the line; -xticks chooses the x values to
//     label (sizes in bytes read better at powers of two).
//   - bar: grouped bars, the x categories are the values of a projection
//     (-x /helper), one bar per value of -series in each group.
//   - scatter: one point per value of -series, x and y are two units
//     (-x cons-ms/s -y p99-us), told apart by the legend.
//
// Example:
//
//	go test -run '^$' -bench Read -count 10 ./ringbuf > results.txt
//	go -C internal/tools run ./cmd/benchplot -kind line -x /size -y Mrec/s \
//		-series /mode -filter '.name:Read /touch:head' -logx \
//		-xlabel 'event size (B)' -ylabel 'records drained (M/s)' -out plots/read results.txt
//
// writes plots/read.svg and plots/read.png. The footer names the CPU and,
// where the input has a "kernel:" configuration line, the kernel.
//
// Units are written as in the input (ns/op, MB/s) or as benchfmt tidies
// them (sec/op, B/s). A point must repeat one measurement: if the results
// behind it differ in a key that no projection names (another touch
// variant, another benchmark), benchplot says which and refuses, where
// benchstat would warn "benchmarks vary in".
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
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
		in     listFlag
		opts   options
		width  = fs.Float64("width", 8, "image `inches` wide")
		height = fs.Float64("height", 5, "image `inches` high")
	)
	fs.Var(&in, "in", "benchmark output `file`, or label=file to name it in .file (repeatable; also taken from arguments; - or none is stdin)")
	fs.StringVar(&opts.kind, "kind", "line", "plot `kind`: line, bar or scatter")
	fs.StringVar(&opts.x, "x", "", "line, bar: `projection` for the x axis (benchstat syntax, e.g. /size); scatter: unit for the x axis")
	fs.StringVar(&opts.y, "y", "", "`unit` for the y axis, e.g. ns/op, Mrec/s")
	fs.StringVar(&opts.series, "series", "", "`projection` whose values are the lines, the bars in each x group, or the scatter points, e.g. '/mode@(upstream copy)' (scatter default .fullname)")
	fs.StringVar(&opts.filter, "filter", "", "benchstat filter `expression`, e.g. '.name:Read /touch:head' (default: every result)")
	fs.BoolVar(&opts.logx, "logx", false, "log-scale x axis (line, scatter)")
	fs.BoolVar(&opts.logy, "logy", false, "log-scale y axis")
	fs.StringVar(&opts.legend, "legend", "", "legend `heading` (default: the -series projection)")
	fs.StringVar(&opts.title, "title", "", "plot `title` (default: benchmark names and axes)")
	fs.StringVar(&opts.xlabel, "xlabel", "", "x axis `label`, in words with the unit (default: the projection or unit)")
	fs.StringVar(&opts.ylabel, "ylabel", "", "y axis `label` (default: the unit)")
	xticks := fs.String("xticks", "", "line: comma-separated x `values` to mark and label, e.g. 16,32,64 (default: chosen from the data)")
	fs.StringVar(&opts.note, "note", "", "free `text` for the caption, e.g. the kernel version")
	fs.StringVar(&opts.out, "out", "benchplot", "output path `prefix`: writes prefix.svg and prefix.png")
	fs.IntVar(&opts.dpi, "dpi", 150, "PNG resolution in dots per inch")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go -C internal/tools run ./cmd/benchplot -kind line|bar|scatter -x ... -y ... [flags] [file ...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	in = append(in, fs.Args()...)
	if *width < 2 || *height < 1.5 || *width > 100 || *height > 100 {
		return fmt.Errorf("-width %g -height %g: want 2–100 by 1.5–100 inches", *width, *height)
	}
	if opts.dpi < 20 || opts.dpi > 1200 {
		return fmt.Errorf("-dpi %d: want 20–1200", opts.dpi)
	}
	if *xticks != "" {
		if opts.kind != "line" {
			return fmt.Errorf("-xticks is for -kind line: the x axis of -kind %s is not a line's", opts.kind)
		}
		for field := range strings.SplitSeq(*xticks, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return fmt.Errorf("-xticks %q: %q is not a number", *xticks, field)
			}
			opts.xticks = append(opts.xticks, x)
		}
	}
	opts.width, opts.height = vg.Length(*width)*vg.Inch, vg.Length(*height)*vg.Inch
	opts.out = strings.TrimSuffix(strings.TrimSuffix(opts.out, ".svg"), ".png")

	fig, warnings, err := build(&benchfmt.Files{Paths: in, AllowStdin: true, AllowLabels: true}, opts)
	for i, w := range warnings {
		if i == 5 {
			fmt.Fprintf(stderr, "benchplot: and %d more unreadable lines\n", len(warnings)-i)
			break
		}
		fmt.Fprintln(stderr, "benchplot: skipped:", w)
	}
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
