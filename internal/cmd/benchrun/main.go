//go:build linux

// Command benchrun runs a benchmark family as internal/benchfamily
// describes it, for make bench-<family>: it says first how many results
// the family's rounds will give and about how long that takes, runs its
// go test commands in rounds, every benchmark once a round (so that a
// slow spell of a shared host falls on every mode alike), writes their
// raw output to the results file and shows how far along they are, one
// line updated in place on a terminal and a plain line every half minute
// elsewhere (CI logs). The results file starts with a "kernel:" line,
// which benchstat prints above its tables and benchplot in its plots'
// footer, beside go test's cpu line, and a "cilium-ebpf:" line, the
// release the runs built with.
//
//	benchrun -family NAME -out results/NAME.txt
//	benchrun -family NAME -tables results/NAME.txt -tools .cache/tools
//	benchrun -family NAME -plots results/NAME.txt -tools .cache/tools
//	benchrun -list                   # the families, one a line
//	benchrun -family NAME -describe  # its runs and knobs
//
// The family's knobs come from the environment (make puts a variable of
// its command line there): a malformed value stops it before anything
// runs.
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

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
	"github.com/ebpf-zc/ebpf/internal/benchprogress"
)

func main() {
	name := flag.String("family", "", "the benchmark family (benchrun -list names them)")
	list := flag.Bool("list", false, "print the families' names, one a line, and stop")
	describe := flag.Bool("describe", false, "print the family's runs and knobs, and stop")
	out := flag.String("out", "", "results file to write")
	estimateOnly := flag.Bool("estimate", false, "announce the plan and stop")
	tables := flag.String("tables", "", "print the family's tables of this saved results `file`")
	plots := flag.String("plots", "", "draw the family's plots of this saved results `file`, beside it")
	tools := flag.String("tools", "", "the `directory` of the tools built from internal/tools (benchstat, benchplot)")
	var o options
	flag.StringVar(&o.goCmd, "go", "go", "the go `command`")
	flag.StringVar(&o.pin, "pin", "", "the CPU `list` pinned runs go on (taskset -c); empty for none")
	flag.BoolVar(&o.libbpf, "libbpf", false, "build the runs that have a libbpf peer with -tags libbpf")
	flag.Parse()
	if *list {
		for _, f := range benchfamily.All() {
			fmt.Println(f.Name)
		}
		return
	}
	f, err := benchfamily.Named(*name)
	if err != nil || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: benchrun -family name (-out file | -tables file | -plots file | -describe) or benchrun -list")
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchrun:", err)
		}
		os.Exit(2)
	}
	title := "make " + f.Target()
	switch {
	case *describe:
		err = describeFamily(os.Stdout, f)
	case *tables != "":
		err = writeTables(os.Stdout, f, *tables, *tools)
	case *plots != "":
		err = drawPlots(f, *plots, *tools)
	case *out != "":
		err = run(f, title, *out, o, *estimateOnly)
	default:
		err = errors.New("one of -out, -tables, -plots or -describe, please")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", title, err)
		os.Exit(1)
	}
}

// run announces the plan and runs f's rounds into the results file out.
func run(f *benchfamily.Family, title, out string, o options, estimateOnly bool) error {
	if err := f.SetTargetValues(); err != nil {
		return err
	}
	if err := f.Check(); err != nil {
		return err
	}
	rounds, err := f.RoundsNow()
	if err != nil {
		return err
	}
	var cmds, envs [][]string
	pinned, libbpf := false, false
	for _, r := range f.Runs {
		cmd, err := command(r, o)
		if err != nil {
			return err
		}
		cmds, envs = append(cmds, cmd), append(envs, r.EnvNow())
		pinned = pinned || r.Pin
		libbpf = libbpf || r.Libbpf
	}
	total, err := f.Plan(o.libbpf, rounds)
	if err != nil {
		return err
	}
	if pinned {
		switch {
		case o.taskset() != nil:
			fmt.Printf("%s: pinned to CPU %s (PIN= to change)\n", title, o.pin)
		case o.pin != "":
			fmt.Printf("%s: not pinned (taskset not found)\n", title)
		default:
			fmt.Printf("%s: not pinned\n", title)
		}
	}
	if libbpf {
		if o.libbpf {
			fmt.Printf("%s: with the libbpf peer\n", title)
		} else {
			fmt.Printf("%s: WITHOUT the libbpf peer (mode=libbpf skips: pkg-config finds no libbpf or no C compiler)\n", title)
		}
	}
	if f.FullRounds > 0 {
		if benchfamily.Full() {
			fmt.Printf("%s: the full reference run\n", title)
		} else {
			fmt.Printf("%s: the quick run (FULL=1 for the reference run docs/%s's tables come from)\n", title, f.Page)
		}
	}
	fmt.Printf("%s: %d results, about %s of benchmarks on the reference host (2-vCPU KVM guest, AMD EPYC); more on a loaded one\n",
		title, total.Results, benchfamily.RoundDuration(total.Cost))
	for _, line := range total.Lines {
		fmt.Printf("%s:   %s\n", title, line)
	}
	fmt.Printf("%s: raw results in %s\n", title, out)
	if estimateOnly {
		return nil
	}

	file, err := os.Create(out)
	if err != nil {
		return err
	}
	defer file.Close()
	var uname unix.Utsname
	if err := unix.Uname(&uname); err == nil {
		fmt.Fprintf(file, "kernel: %s\n", unix.ByteSliceToString(uname.Release[:]))
	}
	// The cilium/ebpf the runs build with (make's BENCHMOD, not go.mod's):
	// the readers named upstream are its.
	if v, err := exec.Command(o.goCmd, "list", "-m", "-f", "{{.Version}}", "github.com/cilium/ebpf").Output(); err == nil {
		fmt.Fprintf(file, "cilium-ebpf: %s\n", strings.TrimSpace(string(v)))
	}
	prog := benchprogress.New(os.Stdout, title, total.Results, total.Cost)
	defer prog.Finish()
	for range rounds {
		for i, cmd := range cmds {
			if err := runOne(cmd, envs[i], file, prog); err != nil {
				return err
			}
		}
	}
	return file.Sync()
}

// runOne runs one command with env beside the environment, its output
// (stdout and stderr) to the results file through prog, which counts the
// results and shows the rest.
func runOne(args, env []string, results io.Writer, prog *benchprogress.Progress) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	lines := prog.Lines(results)
	cmd.Stdout, cmd.Stderr = lines, lines
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("%s failed (%v); its output is in the results file", strings.Join(append(slices.Clone(env), args...), " "), err)
		}
		return err
	}
	return nil
}

// describeFamily prints what f runs and the knobs it takes.
func describeFamily(w io.Writer, f *benchfamily.Family) error {
	fmt.Fprintf(w, "%s: %s (docs/%s)\n", f.Name, f.What, f.Page)
	rounds := fmt.Sprintf("%d", f.Rounds)
	if f.FullRounds > 0 && f.FullRounds != f.Rounds {
		rounds += fmt.Sprintf(", %d with FULL=1", f.FullRounds)
	}
	count := "COUNT"
	if f.RoundsEnv != "" {
		count = f.RoundsEnv + ", else COUNT"
	}
	fmt.Fprintf(w, "rounds: %s (%s)\n", rounds, count)
	for _, r := range f.Runs {
		fmt.Fprint(w, "run: ")
		if len(r.Env) > 0 {
			fmt.Fprintf(w, "%s ", strings.Join(r.Env, " "))
		}
		fmt.Fprintf(w, "go test -bench '%s' %s", r.Bench, r.Pkg)
		switch {
		case r.Benchtime != "":
			fmt.Fprintf(w, ", -benchtime %s", r.Benchtime)
		case r.BenchtimeEnv != "":
			fmt.Fprintf(w, ", -benchtime from %s", r.BenchtimeEnv)
		}
		if r.Pin {
			fmt.Fprint(w, ", pinned")
		}
		fmt.Fprintln(w)
	}
	for _, k := range f.Knobs {
		def := k.Default
		if k.Target != "" {
			def += "; make: " + k.Target
		}
		if k.Alias != "" {
			def += "; also " + k.Alias
		}
		fmt.Fprintf(w, "  %s (%s, %q): %s\n", k.Env, k.Kind, def, k.Doc)
	}
	for _, k := range benchfamily.Common {
		fmt.Fprintf(w, "  %s (%s): %s\n", k.Env, k.Kind, k.Doc)
	}
	return nil
}
