//go:build linux

package upstreambench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchprogress"
	"github.com/ebpf-zc/ebpf/internal/drainbench"
)

// Config is one comparison of a base against a head.
type Config struct {
	// Repo is this repository's root.
	Repo string
	// Tools is the directory holding the benchstat and benchplot
	// binaries (the Makefile builds them from internal/tools), absolute
	// or relative to Repo.
	Tools string
	// Base is a version or a checkout; empty means the version Repo's
	// go.mod pins.
	Base string
	// Head is the checkout under review.
	Head string
	// Out is the directory for the results, the summary and the plots.
	Out string
	// Work is where the scratch modules go; empty means a temporary
	// directory removed at the end.
	Work string
	// Count is how many runs of each side, interleaved base, head.
	Count int
	// BenchTime is go test's -benchtime for each benchmark.
	BenchTime string
	// Sizes are the event sizes, as drainbench.ParseSizes reads them.
	Sizes string
	// Ring is the ring's size in bytes.
	Ring int
	// Pin is a command the runs go through, as "taskset -c 1"; empty runs
	// them directly.
	Pin []string
	// Stdout gets the plan, the progress of the runs and the tables (the
	// runs' own output goes to the results files); Stderr the
	// diagnostics of the go commands that draw and compare.
	Stdout, Stderr io.Writer
}

// Resolve checks both sides, the head first: a wrong path fails before
// anything slow happens.
func (cfg *Config) Resolve() (base, head *Side, err error) {
	if cfg.Count < 1 {
		return nil, nil, fmt.Errorf("COUNT=%d: want at least 1 run", cfg.Count)
	}
	if cfg.Ring <= 0 || cfg.Ring&(cfg.Ring-1) != 0 {
		return nil, nil, fmt.Errorf("RING=%d: want a power of two", cfg.Ring)
	}
	if head, err = ResolveSide("head", cfg.Head); err != nil {
		return nil, nil, err
	}
	baseSpec := cfg.Base
	if baseSpec == "" {
		if baseSpec, err = PinnedVersion(cfg.Repo); err != nil {
			return nil, nil, err
		}
	}
	if base, err = ResolveSide("base", baseSpec); err != nil {
		return nil, nil, err
	}
	if base.Label == head.Label {
		base.Label, head.Label = "base-"+base.Label, "head-"+head.Label
	}
	return base, head, nil
}

// Run measures both sides and compares them: it builds each side's
// benchmark in its scratch module, runs the two interleaved Count times
// into Out/base.txt and Out/head.txt, then prints benchstat tables and
// draws plots. What it prints also goes to Out/summary.txt.
func Run(cfg Config) error {
	base, head, err := cfg.Resolve()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	summary, err := os.Create(filepath.Join(cfg.Out, "summary.txt"))
	if err != nil {
		return err
	}
	defer summary.Close()
	// The progress line goes to the terminal alone; the rest to both.
	terminal := cfg.Stdout
	cfg.Stdout = io.MultiWriter(cfg.Stdout, summary)

	work := cfg.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "upstreambench-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	// The head first: it is the side under review, the likelier to fail.
	scratches := make([]*Scratch, 2)
	for i, side := range []*Side{head, base} {
		fmt.Fprintf(cfg.Stdout, "== building the benchmark against cilium/ebpf at %s (%s)\n", side.Label, side.Dir)
		s, err := buildSide(filepath.Join(work, side.Role), cfg.Repo, side)
		if err != nil {
			return err
		}
		scratches[1-i] = s
	}
	printPlans(cfg.Stdout, scratches)
	results, estimate, err := cfg.cost(scratches)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stdout, "\n== %d results (%d runs a side), about %s on the reference host (2-vCPU KVM guest, AMD EPYC); more on a loaded one\n",
		results, cfg.Count, estimate.Round(time.Second))
	prog := benchprogress.New(terminal, "make bench-upstream", results, estimate)
	files, err := cfg.runInterleaved(scratches, prog)
	prog.Finish()
	if err != nil {
		return err
	}
	baseResults, headResults, err := ReadRun(filepath.Dir(files[0]))
	if err != nil {
		return err
	}
	if err := cfg.Tables(baseResults, headResults); err != nil {
		return err
	}
	return cfg.Plots(baseResults, headResults)
}

// buildSide detects side's API, writes its scratch module and builds it.
func buildSide(dir, repo string, side *Side) (*Scratch, error) {
	api, err := DetectAPI(side.Dir)
	if err != nil {
		return nil, fmt.Errorf("cilium/ebpf at %s: %w", side.Label, err)
	}
	plan, err := NewPlan(side, api, true, "")
	if err != nil {
		return nil, err
	}
	s, err := NewScratch(dir, repo, plan)
	if err != nil {
		return nil, err
	}
	return s, s.Build()
}

// printPlans writes a table of which side runs which mode, and why a mode
// is absent where it is.
func printPlans(w io.Writer, scratches []*Scratch) {
	fmt.Fprintln(w, "\n== modes")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "mode\twhat")
	for _, s := range scratches {
		fmt.Fprintf(tw, "\t%s", s.Plan.Side.Label)
	}
	fmt.Fprintln(tw)
	for _, mode := range Modes {
		fmt.Fprintf(tw, "%s\t%s", mode.Name, mode.What)
		for _, s := range scratches {
			fmt.Fprintf(tw, "\t%s", map[bool]string{true: "runs", false: "absent"}[s.Plan.Has(mode.Name)])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, s := range scratches {
		for _, line := range s.Plan.absentLines() {
			fmt.Fprintf(w, "absent at %s: %s\n", s.Plan.Side.Label, line)
		}
	}
}

// absentLines says, a line per mode in Modes order, which modes the plan
// lacks and why.
func (p *Plan) absentLines() []string {
	var lines []string
	for _, mode := range Modes {
		if why, ok := p.Absent[mode.Name]; ok {
			lines = append(lines, fmt.Sprintf("mode=%s: %s", mode.Name, why))
		}
	}
	return lines
}

// header is what a results file says about its side before the runs:
// the kernel, then comment lines, which benchstat and benchplot pass over
// and ReadResults reads.
func header(s *Scratch) string {
	side := s.Plan.Side
	var b strings.Builder
	// A configuration line, as every make target's results start with:
	// benchstat prints it above its tables, benchplot in its footer.
	fmt.Fprintf(&b, "kernel: %s\n", kernelRelease())
	fmt.Fprintf(&b, "%s%s: cilium/ebpf at %s\n", headerPrefix, side.Role, side.Label)
	fmt.Fprintf(&b, "# source: %s, commit %s\n", side.Dir, side.Commit)
	fmt.Fprintf(&b, "# cpu model name: %s\n", cpuModel())
	var names []string
	for _, mode := range s.Plan.Run {
		names = append(names, mode.Name)
	}
	fmt.Fprintf(&b, "# modes run: %s\n", strings.Join(names, " "))
	for _, line := range s.Plan.absentLines() {
		fmt.Fprintf(&b, "# absent: %s\n", line)
	}
	return b.String()
}

// cpuModel is the CPU's model name as lscpu shows it, from /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// runInterleaved runs each side's benchmark Count times, alternating
// sides and which goes first, so that a drift of the machine (another job
// starting, the CPU warming) falls on both alike. It returns the results
// files, one a side.
func (cfg *Config) runInterleaved(scratches []*Scratch, prog *benchprogress.Progress) ([]string, error) {
	var files []string
	var outs []*os.File
	for _, s := range scratches {
		path := filepath.Join(cfg.Out, s.Plan.Side.Role+".txt")
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if _, err := io.WriteString(f, header(s)); err != nil {
			return nil, err
		}
		files, outs = append(files, path), append(outs, f)
	}
	for run := range cfg.Count {
		for i := range scratches {
			if run%2 == 1 {
				i = len(scratches) - 1 - i
			}
			s := scratches[i]
			if err := cfg.runOnce(s, prog.Lines(outs[i])); err != nil {
				return nil, fmt.Errorf("run %d against cilium/ebpf at %s: %w (results so far in %s)", run+1, s.Plan.Side.Label, err, files[i])
			}
		}
	}
	return files, nil
}

// cost is how many results the runs give, every mode of each side at
// every size and touch, Count times, and about how long they take.
func (cfg *Config) cost(scratches []*Scratch) (int, time.Duration, error) {
	sizes, err := drainbench.ParseSizes(cfg.Sizes)
	if err != nil {
		return 0, 0, err
	}
	benchtime, err := time.ParseDuration(cfg.BenchTime)
	if err != nil {
		benchtime = time.Second // an iteration count: say it as go test's default
	}
	results := 0
	for _, s := range scratches {
		results += len(s.Plan.Run) * len(sizes) * 2 * cfg.Count
	}
	return results, time.Duration(results) * benchprogress.DrainCost(benchtime), nil
}

// runOnce runs one side's test binary once, every size and mode.
func (cfg *Config) runOnce(s *Scratch, out io.Writer) error {
	args := append(append([]string{}, cfg.Pin...), s.Binary,
		"-test.run=^$",
		"-test.bench=^"+BenchmarkName+"$",
		"-test.benchmem",
		"-test.benchtime="+cfg.BenchTime,
		"-test.count=1",
		"-test.timeout=0",
		"-upstream.ring="+strconv.Itoa(cfg.Ring),
		"-upstream.sizes="+cfg.Sizes,
	)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// Results is one side's results file and what its header says.
type Results struct {
	// Path is the results file.
	Path string
	// Role is "base" or "head".
	Role string
	// Label names the side in tables and plots.
	Label string
	// Modes are the modes the side ran, in Modes order.
	Modes []string
}

// headerPrefix starts the header line that names a results file's side.
const headerPrefix = "# upstreambench "

// ReadResults reads the header of a results file that Run wrote.
func ReadResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &Results{Path: path}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		if rest, ok := strings.CutPrefix(line, headerPrefix); ok {
			role, label, ok := strings.Cut(rest, ": cilium/ebpf at ")
			if !ok {
				return nil, fmt.Errorf("%s: header line %q names no side", path, line)
			}
			r.Role, r.Label = role, label
		}
		if rest, ok := strings.CutPrefix(line, "# modes run: "); ok {
			r.Modes = strings.Fields(rest)
		}
		if strings.HasPrefix(line, "Benchmark") {
			break // the header is over
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if r.Label == "" || len(r.Modes) == 0 {
		return nil, fmt.Errorf("%s: not a results file of make bench-upstream (no %q and \"# modes run:\" lines)", path, strings.TrimSpace(headerPrefix))
	}
	return r, nil
}

// has reports whether the side ran the named mode.
func (r *Results) has(mode string) bool {
	return slices.Contains(r.Modes, mode)
}

// labelled is the file as benchstat and benchplot take it with a label.
func (r *Results) labelled() string {
	return r.Label + "=" + r.Path
}

// ReadRun reads the two results files Run wrote into dir.
func ReadRun(dir string) (base, head *Results, err error) {
	if base, err = ReadResults(filepath.Join(dir, "base.txt")); err != nil {
		return nil, nil, err
	}
	if head, err = ReadResults(filepath.Join(dir, "head.txt")); err != nil {
		return nil, nil, err
	}
	return base, head, nil
}

// Tables prints benchstat tables, one benchmark and one touch variant a
// table: each mode base against head, every mode at the head against
// cilium/ebpf's ReadInto, and our Records against its Lease where the
// head has both.
func (cfg *Config) Tables(base, head *Results) error {
	const drainRate = ".name:Drain .unit:Mrec/s"
	for _, mode := range Modes {
		inBase, inHead := base.has(mode.Name), head.has(mode.Name)
		if !inBase && !inHead {
			fmt.Fprintf(cfg.Stdout, "\n== mode=%s (%s): absent at both sides\n", mode.Name, mode.What)
			continue
		}
		fmt.Fprintf(cfg.Stdout, "\n== mode=%s (%s), Mrec/s: %s against %s\n", mode.Name, mode.What, base.Label, head.Label)
		if !inBase || !inHead {
			fmt.Fprintf(cfg.Stdout, "(absent at %s: one column only)\n", map[bool]string{true: head.Label, false: base.Label}[inBase])
		}
		if err := cfg.benchstat("-filter", drainRate+" /mode:"+mode.Name, "-table", ".config,/touch", "-row", "/size",
			base.labelled(), head.labelled()); err != nil {
			return err
		}
	}
	fmt.Fprintf(cfg.Stdout, "\n== every mode at %s against cilium/ebpf's ReadInto (upstream), Mrec/s\n", head.Label)
	if err := cfg.benchstat("-filter", drainRate, "-table", ".config,/touch", "-row", "/size",
		"-col", "/mode@("+strings.Join(head.Modes, " ")+")", head.labelled()); err != nil {
		return err
	}
	if head.has("lease-batch") && head.has("records") {
		fmt.Fprintf(cfg.Stdout, "\n== our records against cilium/ebpf's lease-batch at %s, Mrec/s\n", head.Label)
		if err := cfg.benchstat("-filter", drainRate, "-table", ".config,/touch", "-row", "/size",
			"-col", "/mode@(lease-batch records)", head.labelled()); err != nil {
			return err
		}
	}
	return nil
}

// Plots draws the drain rate against event size with touch=head: every
// mode at the head, and cilium/ebpf's ReadInto at the base and the head.
// The plots go next to the head's results file.
func (cfg *Config) Plots(base, head *Results) error {
	dir := filepath.Dir(head.Path)
	plots := [][]string{
		{"-series", "/mode@(" + strings.Join(head.Modes, " ") + ")", "-filter", ".name:Drain /touch:head", "-legend", "reader",
			"-title", "ring buffer drain rate at cilium/ebpf " + head.Label + " (touch=head)",
			"-out", filepath.Join(dir, "head-modes"), head.Path},
		{"-series", ".file", "-filter", ".name:Drain /mode:upstream /touch:head", "-legend", "cilium/ebpf",
			"-title", "cilium/ebpf Reader.ReadInto drain rate, base against head (touch=head)",
			"-out", filepath.Join(dir, "upstream-readinto"), base.labelled(), head.labelled()},
	}
	for _, plot := range plots {
		args := append([]string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-logx", "-logy",
			"-xlabel", "event size (B)", "-ylabel", "records drained (millions/s)"}, plot...)
		if err := cfg.runTool("benchplot", args...); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}

// benchstat runs benchstat from the tools directory.
func (cfg *Config) benchstat(args ...string) error {
	return cfg.runTool("benchstat", args...)
}

// runTool runs the named binary of the tools directory in our
// repository, its output to Stdout.
func (cfg *Config) runTool(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(cfg.Tools, name), args...)
	cmd.Dir = cfg.Repo
	cmd.Stdout, cmd.Stderr = cfg.Stdout, cfg.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// kernelRelease is uname -r.
func kernelRelease() string {
	out, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
