package vmtest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// Row is one line of the summary table: one package on one kernel.
type Row struct {
	// Kernel is the matrix entry, Release its uname -r, Package the
	// package path inside the module.
	Kernel, Release, Package string
	// Boot is the kernel's boot time in seconds (the same on each of its
	// rows), zero when it never booted.
	Boot   float64
	Counts TestCounts
	// Bench is the smoke run's state: "ok (N)" with N benchmarks run,
	// "FAIL", "-" for a package without benchmarks, "not run".
	Bench string
	// Result is the package's test result on that kernel.
	Result string
}

// Rows makes the summary table from a report.
func (r *Report) Rows() []Row {
	var rows []Row
	for _, kr := range r.Kernels {
		release := "-"
		if kr.Cached != nil {
			release = kr.Cached.Release
		}
		for _, b := range r.Builds {
			row := Row{
				Kernel: kr.Kernel.Name, Release: release, Package: b.Pkg.Name(),
				Boot: kr.Boot.Booted.Seconds(), Bench: "-",
			}
			switch {
			case b.Err != nil:
				row.Result, row.Bench = "build failed", "not run"
				rows = append(rows, row)
				continue
			case b.Pkg.HasBenchmarks && r.Plan != nil && planned(r.Plan, b.Pkg.ImportPath, wire.PhaseBench):
				row.Bench = benchState(kr.Console.Step(b.Pkg.ImportPath, wire.PhaseBench))
			}
			s := kr.Console.Step(b.Pkg.ImportPath, wire.PhaseTest)
			switch {
			case s == nil:
				row.Result = "not run (" + string(kr.Verdict.Outcome) + ")"
			case !s.Ended:
				row.Counts = CountTests(s.Output)
				row.Result = "no result (" + string(kr.Verdict.Outcome) + ")"
			default:
				row.Counts = CountTests(s.Output)
				row.Result = exitState(s)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func planned(p *wire.Plan, pkg string, phase wire.Phase) bool {
	for _, st := range p.Steps {
		if st.Package == pkg && st.Phase == phase {
			return true
		}
	}
	return false
}

func benchState(s *StepResult) string {
	switch {
	case s == nil:
		return "not run"
	case !s.Ended:
		return "no result"
	case s.Exit == 0:
		return fmt.Sprintf("ok (%d)", CountBenchmarks(s.Output))
	}
	return exitState(s)
}

func exitState(s *StepResult) string {
	switch {
	case s.Why != "":
		return "FAIL (" + s.Why + ")"
	case s.Exit != 0:
		return fmt.Sprintf("FAIL (exit %d)", s.Exit)
	}
	return "ok"
}

// Totals sums the test counts of every row.
func (r *Report) Totals() TestCounts {
	var t TestCounts
	for _, row := range r.Rows() {
		t.Add(row.Counts)
	}
	return t
}

// WriteSummary prints the summary table, one line per kernel with its
// outcome and accelerator, why each kernel ran with its accelerator,
// where the logs of every failed run are, the benchmark disclaimer, and a
// closing count line.
func (r *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "\nKernel matrix: -accel %s, started with %s\n\n", r.Accel, r.AccelReason)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "KERNEL\tRELEASE\tPACKAGE\tBOOT\tPASS\tFAIL\tSKIP\tBENCH SMOKE\tRESULT")
	for _, row := range r.Rows() {
		boot := "-"
		if row.Boot > 0 {
			boot = fmt.Sprintf("%.1fs", row.Boot)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", row.Kernel, row.Release, row.Package, boot,
			row.Counts.Passed, row.Counts.Failed, row.Counts.Skipped, row.Bench, row.Result)
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, kr := range r.Kernels {
		vm := "-"
		if kr.Boot.Elapsed > 0 {
			vm = fmt.Sprintf("%.1fs in the VM", kr.Boot.Elapsed.Seconds())
		}
		accel := "-"
		if kr.Accel != "" {
			accel = kr.Accel
		}
		logs := ""
		if kr.LogDir != "" {
			logs = "logs: " + shortPath(kr.LogDir)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", kr.Kernel.Name, kr.Verdict, vm, accel, logs)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nAccelerators:")
	for _, kr := range r.Kernels {
		if kr.Accel == "" {
			fmt.Fprintf(w, "  %s: not booted\n", kr.Kernel.Name)
			continue
		}
		fmt.Fprintf(w, "  %s: %s, %s\n", kr.Kernel.Name, kr.Accel, kr.AccelWhy)
		if a := kr.KVMAttempt; a != nil {
			fmt.Fprintf(w, "    the %s run: %s, stopped after %.1fs; kept: %s\n", a.Accel, a.Verdict, a.Elapsed.Seconds(), runLogs(a.LogDir))
		}
	}
	for _, kr := range r.Kernels {
		if !kr.Verdict.OK() && kr.Accel != "" && kr.LogDir != "" {
			fmt.Fprintf(w, "%s failed: %s; kept: %s\n", kr.Kernel.Name, kr.Verdict.Outcome, runLogs(kr.LogDir))
		}
	}
	for _, b := range r.Builds {
		if b.Err != nil {
			fmt.Fprintf(w, "build failed: %s: %v\n", b.Pkg.ImportPath, firstLine(b.Output))
		}
	}
	fmt.Fprintf(w, "\nTimes: fetch %.1fs, build %.1fs, total %.1fs", r.FetchTime.Seconds(), r.BuildTime.Seconds(), r.Total.Seconds())
	if r.Jobs > 1 {
		// Side by side, each VM's time above is longer than alone.
		fmt.Fprintf(w, ", up to %d VMs at a time", r.Jobs)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%s\n\n", BenchDisclaimer)
	t := r.Totals()
	// The closing line has the plain "N passed, N failed, N skipped" form
	// that CI logs are read by.
	fmt.Fprintf(w, "vmtest: %d passed, %d failed, %d skipped\n", t.Passed, t.Failed, t.Skipped)
}

// runLogs names the QEMU output and the console log of a run.
func runLogs(dir string) string {
	return shortPath(filepath.Join(dir, "qemu.log")) + " (QEMU), " + shortPath(filepath.Join(dir, "console.log")) + " (console)"
}

// shortPath shows p relative to the working folder when it is below it.
func shortPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
