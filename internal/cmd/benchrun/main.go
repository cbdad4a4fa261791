//go:build linux

// Command benchrun runs the go test commands of a make bench target: it
// says first how many results they will give and about how long that
// takes, writes their raw output to the results file, and shows how far
// along they are while they run, one line updated in place on a terminal
// and a plain line every half minute elsewhere (CI logs).
//
//	benchrun -out results/ringbuf.txt -title "make bench" -- \
//		go test -run '^$' -bench 'BenchmarkRead$' -count 6 ./ringbuf/ \
//		--- go test -run '^$' -bench 'BenchmarkEndToEnd$' -count 6 ./ringbuf/
//
// Commands are separated by "---" and run one after the other; each may
// start with a wrapper such as taskset. With -rounds n the list runs n
// times over, so that a benchmark's runs are spread over the whole time
// instead of back to back and a slow spell of a shared host falls on
// every mode alike (give each command -count 1). The results file starts
// with a "kernel:" line, which benchstat prints above its tables and
// benchplot in its plots' footer, beside go test's cpu line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/benchprogress"
)

func main() {
	out := flag.String("out", "", "results file to write (required)")
	title := flag.String("title", "benchrun", "what the announcement and progress lines start with")
	estimateOnly := flag.Bool("estimate", false, "announce the plan and stop")
	rounds := flag.Int("rounds", 1, "run the commands this many times over, interleaving the runs of every benchmark")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchrun -out file [-title text] -- command args... [--- command args...]")
		os.Exit(2)
	}
	if *rounds < 1 {
		fmt.Fprintln(os.Stderr, "benchrun: -rounds must be at least 1")
		os.Exit(2)
	}
	if err := run(*out, *title, splitCommands(flag.Args()), *rounds, *estimateOnly); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *title, err)
		os.Exit(1)
	}
}

// splitCommands splits the arguments at each "---".
func splitCommands(args []string) [][]string {
	var cmds [][]string
	for len(args) > 0 {
		i := slices.Index(args, "---")
		if i < 0 {
			i = len(args)
		}
		if i > 0 {
			cmds = append(cmds, args[:i])
		}
		args = args[min(i+1, len(args)):]
	}
	return cmds
}

// planCommands adds up the plans of the commands, each run rounds times.
func planCommands(cmds [][]string, rounds int) (plan, error) {
	var total plan
	for _, cmd := range cmds {
		args, err := parseGoTest(cmd)
		if err != nil {
			return plan{}, fmt.Errorf("%q: %w", strings.Join(cmd, " "), err)
		}
		args.count *= rounds
		pl := planFor(args)
		total.results += pl.results
		total.cost += pl.cost
		total.lines = append(total.lines, pl.lines...)
	}
	if rounds > 1 {
		total.lines = append(total.lines, fmt.Sprintf("in %d rounds: every benchmark runs once a round", rounds))
	}
	return total, nil
}

func run(out, title string, cmds [][]string, rounds int, estimateOnly bool) error {
	total, err := planCommands(cmds, rounds)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d results, about %s of benchmarks on the reference host (2-vCPU KVM guest, AMD EPYC); more on a loaded one\n",
		title, total.results, roundDuration(total.cost))
	for _, line := range total.lines {
		fmt.Printf("%s:   %s\n", title, line)
	}
	fmt.Printf("%s: raw results in %s\n", title, out)
	if estimateOnly {
		return nil
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	var uname unix.Utsname
	if err := unix.Uname(&uname); err == nil {
		fmt.Fprintf(f, "kernel: %s\n", unix.ByteSliceToString(uname.Release[:]))
	}
	prog := benchprogress.New(os.Stdout, title, total.results, total.cost)
	defer prog.Finish()
	for range rounds {
		for _, cmd := range cmds {
			if err := runOne(cmd, f, prog); err != nil {
				return err
			}
		}
	}
	return f.Sync()
}

// runOne runs one command, its output (stdout and stderr) to the results
// file through prog, which counts the results and shows the rest.
func runOne(args []string, results io.Writer, prog *benchprogress.Progress) error {
	cmd := exec.Command(args[0], args[1:]...)
	lines := prog.Lines(results)
	cmd.Stdout, cmd.Stderr = lines, lines
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("%s failed (%v); its output is in the results file", args[0], err)
		}
		return err
	}
	return nil
}
