package upstreambench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Config is one comparison of a base against a head.
type Config struct {
	// Repo is this repository's root.
	Repo string
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
	// Stdout gets the plan, the runs and the tables; Stderr the runs'
	// diagnostics.
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

	files, err := cfg.runInterleaved(scratches)
	if err != nil {
		return err
	}
	return cfg.compare(scratches, files)
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
// comment lines, which benchstat and benchplot pass over.
func header(s *Scratch) string {
	side := s.Plan.Side
	var b strings.Builder
	fmt.Fprintf(&b, "# upstreambench %s: cilium/ebpf at %s\n", side.Role, side.Label)
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
func (cfg *Config) runInterleaved(scratches []*Scratch) ([]string, error) {
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
			fmt.Fprintf(cfg.Stdout, "\n== run %d of %d: cilium/ebpf at %s\n", run+1, cfg.Count, s.Plan.Side.Label)
			if err := cfg.runOnce(s, io.MultiWriter(outs[i], cfg.Stdout)); err != nil {
				return nil, fmt.Errorf("run %d against cilium/ebpf at %s: %w (results so far in %s)", run+1, s.Plan.Side.Label, err, files[i])
			}
		}
	}
	return files, nil
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
	cmd.Stdout, cmd.Stderr = out, cfg.Stderr
	return cmd.Run()
}

// compare prints benchstat tables, base against head for each mode and
// the modes side by side at the head, and draws the plots.
func (cfg *Config) compare(scratches []*Scratch, files []string) error {
	base, head := scratches[0].Plan.Side, scratches[1].Plan.Side
	labelled := []string{base.Label + "=" + files[0], head.Label + "=" + files[1]}
	for _, mode := range Modes {
		inBase, inHead := scratches[0].Plan.Has(mode.Name), scratches[1].Plan.Has(mode.Name)
		if !inBase && !inHead {
			fmt.Fprintf(cfg.Stdout, "\n== mode=%s: absent at both sides\n", mode.Name)
			continue
		}
		fmt.Fprintf(cfg.Stdout, "\n== mode=%s (%s): %s against %s\n", mode.Name, mode.What, base.Label, head.Label)
		if !inBase || !inHead {
			fmt.Fprintf(cfg.Stdout, "(absent at %s: one column only)\n", map[bool]string{true: head.Label, false: base.Label}[inBase])
		}
		args := append([]string{"-filter", "/mode:" + mode.Name + " .unit:Mrec/s", "-row", "/touch,/size"}, labelled...)
		if err := cfg.benchstat(args...); err != nil {
			return err
		}
	}
	for _, touch := range []string{"head", "all"} {
		fmt.Fprintf(cfg.Stdout, "\n== every mode at %s, touch=%s\n", head.Label, touch)
		if err := cfg.benchstat("-filter", "/touch:"+touch+" .unit:Mrec/s", "-col", "/mode", "-row", "/size", head.Label+"="+files[1]); err != nil {
			return err
		}
	}
	plots := [][]string{
		{"-series", "mode", "-filter", "touch=head", "-title", "ringbuf drain at cilium/ebpf " + head.Label + ", touch=head",
			"-out", filepath.Join(cfg.Out, "head-modes"), files[1]},
		{"-series", ".file", "-filter", "touch=head,mode=upstream", "-title", "cilium/ebpf Reader.ReadInto, base against head, touch=head",
			"-out", filepath.Join(cfg.Out, "upstream-readinto"), labelled[0], labelled[1]},
	}
	for _, plot := range plots {
		args := append([]string{"run", "./internal/benchplot", "-kind", "line", "-x", "size", "-y", "Mrec/s", "-logx", "-logy", "-note", kernelRelease()}, plot...)
		if err := cfg.goTool(args...); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}

// benchstat runs the benchstat our go.mod names as a tool.
func (cfg *Config) benchstat(args ...string) error {
	return cfg.goTool(append([]string{"tool", "benchstat"}, args...)...)
}

// goTool runs the go command in our repository, its output to Stdout.
func (cfg *Config) goTool(args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = cfg.Repo
	cmd.Stdout, cmd.Stderr = cfg.Stdout, cfg.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args[:2], " "), err)
	}
	return nil
}

// kernelRelease is uname -r, for the plots' captions.
func kernelRelease() string {
	out, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "kernel unknown"
	}
	return "Linux " + strings.TrimSpace(string(out))
}
