//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

// writeTables prints f's tables of the results file: each step's heading,
// the command that makes the table (so that it can be run again), and
// its output. A check that fails fails the target, after its lines.
func writeTables(w io.Writer, f *benchfamily.Family, results, tools string) error {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	first := true
	for _, t := range f.Tables {
		if t.Heading != "" {
			heading := t.Heading
			if first {
				heading += " (results: " + results + ")"
			}
			fmt.Fprintf(bw, "\n== %s\n", heading)
		}
		first = false
		var cmd []string
		switch {
		case t.Check != nil:
			if err := t.Check(results, printer{bw}); err != nil {
				return err
			}
			continue
		case t.Benchstat != nil:
			cmd = append([]string{filepath.Join(tools, "benchstat")}, t.Benchstat...)
		default:
			cmd = append([]string{filepath.Join(tools, t.Tool[0])}, t.Tool[1:]...)
		}
		cmd = append(cmd, results)
		fmt.Fprintln(bw, shellQuote(cmd))
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := runTool(cmd, w); err != nil {
			return err
		}
	}
	return nil
}

// printer is a check's Printer.
type printer struct{ w io.Writer }

func (p printer) Printf(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

// drawPlots makes f's derived files and draws its plots of the results
// file, beside it; the tools' reports go to stdout.
func drawPlots(f *benchfamily.Family, results, tools string) error {
	base := strings.TrimSuffix(results, filepath.Ext(results))
	for _, d := range f.Derive {
		out, err := os.Create(base + d.Suffix)
		if err != nil {
			return err
		}
		cmd := append(append([]string{filepath.Join(tools, d.Tool[0])}, d.Tool[1:]...), results)
		err = runTool(cmd, io.MultiWriter(out, os.Stdout))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	for _, p := range f.Plots {
		if p.If != "" {
			has, err := holds(results, "Benchmark"+p.If)
			if err != nil {
				return err
			}
			if !has {
				continue // a saved run without this benchmark: no plot of it
			}
		}
		cmd := []string{filepath.Join(tools, "benchplot")}
		for _, a := range p.Args {
			cmd = append(cmd, benchfamily.Expand(a))
		}
		cmd = append(cmd, "-out", base+p.Suffix, results)
		for _, with := range p.With {
			cmd = append(cmd, base+with)
		}
		if err := runTool(cmd, os.Stdout); err != nil {
			return err
		}
	}
	return nil
}

// holds reports whether the results file has a result of bench (its
// name up to a sub-benchmark or the end).
func holds(results, bench string) (bool, error) {
	file, err := os.Open(results)
	if err != nil {
		return false, err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), bench); ok && (rest == "" || strings.ContainsAny(rest[:1], "/-\t ")) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// runTool runs a tool, its output to w and its errors to stderr.
func runTool(args []string, w io.Writer) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", shellQuote(args), err)
	}
	return nil
}

// shellQuote writes a command line as a shell reads it back.
func shellQuote(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+") == "" {
			quoted[i] = a
		} else {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
