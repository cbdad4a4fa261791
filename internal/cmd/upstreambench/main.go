//go:build linux

// Command upstreambench runs the ring buffer drain benchmark against two
// versions of cilium/ebpf and compares them with benchstat: what `make
// bench-upstream` runs. See package internal/upstreambench.
//
//	go run ./internal/cmd/upstreambench -upstream ../cilium-ebpf [-base v0.22.0]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
	"github.com/ebpf-zc/ebpf/internal/drainbench"
	"github.com/ebpf-zc/ebpf/internal/upstreambench"
)

// main runs the command, exiting 2 with the error on stderr if it fails.
func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "upstreambench:", err)
		os.Exit(2)
	}
}

// run parses args and runs the comparison.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("upstreambench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := upstreambench.Config{Stdout: stdout, Stderr: stderr}
	var pin, tables, plots string
	fs.StringVar(&cfg.Head, "upstream", "", "the cilium/ebpf `checkout` under review (make's UPSTREAM)")
	fs.StringVar(&cfg.Base, "base", "", "what to compare it against: a `version` or a checkout (default: the version go.mod pins)")
	fs.StringVar(&cfg.Repo, "repo", ".", "this repository's `root`")
	fs.StringVar(&cfg.Tools, "tools", ".cache/tools", "`directory` of the benchstat and benchplot binaries, built from internal/tools (make does)")
	fs.StringVar(&cfg.Out, "out", "results/upstream", "`directory` for base.txt, head.txt, summary.txt and the plots")
	fs.StringVar(&cfg.Work, "work", "", "keep the scratch modules in this `directory` (default: a temporary one, removed)")
	// The runs and -benchtime default to make bench's (the ringbuf
	// family's: COUNT, FULL and BENCHTIME from the environment).
	ringbuf, err := benchfamily.Named("ringbuf")
	if err != nil {
		return err
	}
	count, err := ringbuf.RoundsNow()
	if err != nil {
		return err
	}
	benchtime, err := ringbuf.Runs[0].BenchtimeNow()
	if err != nil {
		return err
	}
	fs.IntVar(&cfg.Count, "count", count, "runs of each side, interleaved (default: make bench's rounds)")
	fs.StringVar(&cfg.BenchTime, "benchtime", benchtime, "go test -benchtime for each benchmark (default: make bench's)")
	fs.StringVar(&cfg.Sizes, "sizes", drainbench.DefaultSizes, "event sizes, comma-separated, or sweep")
	fs.IntVar(&cfg.Ring, "ring", 256<<20, "ring buffer size in bytes, a power of two")
	fs.StringVar(&pin, "pin", "", "`command` the runs go through, e.g. \"taskset -c 1\"")
	fs.StringVar(&tables, "tables", "", "print the tables of a saved run in `directory` (its base.txt and head.txt) and measure nothing")
	fs.StringVar(&plots, "plots", "", "draw the plots of a saved run in `directory` and measure nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: the checkout goes in -upstream", fs.Args())
	}
	if tables != "" || plots != "" {
		return redo(cfg, tables, plots)
	}
	if cfg.Head == "" {
		return fmt.Errorf("no checkout to measure: make bench-upstream UPSTREAM=<cilium/ebpf checkout> [BASE=<version or checkout>]")
	}
	if _, err := drainbench.ParseSizes(cfg.Sizes); err != nil {
		return err
	}
	cfg.Pin = strings.Fields(pin)
	return upstreambench.Run(cfg)
}

// redo prints the tables or draws the plots of saved runs.
func redo(cfg upstreambench.Config, tables, plots string) error {
	if tables != "" {
		base, head, err := upstreambench.ReadRun(tables)
		if err != nil {
			return err
		}
		if err := cfg.Tables(base, head); err != nil {
			return err
		}
	}
	if plots != "" {
		base, head, err := upstreambench.ReadRun(plots)
		if err != nil {
			return err
		}
		return cfg.Plots(base, head)
	}
	return nil
}
