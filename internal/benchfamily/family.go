//go:build linux

package benchfamily

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// A Family is one make target's benchmarks: make bench-<Name>.
type Family struct {
	// Name is the target's suffix, and the results file's prefix.
	Name string
	// Alias is an older name of the target that still runs it: make bench
	// runs the ringbuf family.
	Alias string
	// What says what the family measures, in a line, for benchrun
	// -describe and docs/results.md's table of targets.
	What string
	// Page is the family's page under docs/, Reference its committed
	// reference run under testdata/, which benchsummary's test
	// summarizes (empty until there is one).
	Page, Reference string
	// Rounds is how many times the runs go over, every benchmark once a
	// round: Rounds by default, FullRounds with FULL=1. RoundsEnv, where
	// set, is the family's own count knob, before COUNT. benchstat wants
	// 6 runs for a confidence interval, and a U-test at n=10 can show a
	// difference at p=0.002 (n=3 cannot go below 0.1): 6 still gives
	// p-values, 10 is the reference.
	Rounds, FullRounds int
	RoundsEnv          string
	// Runs are the go test commands of a round.
	Runs []Run
	// Rig are the packages the family's benchmark files use beside the
	// library and the shared plumbing, as the module names them
	// ("internal/perfdrain"): a library's test binary (ringbuf's, perf's)
	// links the rigs of the families that run there and no other
	// (TestLibraryTestsLinkTheirRigsOnly).
	Rig []string
	// Knobs are the settings the family's benchmarks and plots read.
	Knobs []benchknob.Knob
	// Tables are written to <results>-tables.txt, in order.
	Tables []Table
	// Derive are files made from the results before the plots.
	Derive []Derive
	// Plots are drawn by benchplot (internal/tools/cmd/benchplot).
	Plots []Plot
	// Summary are the sections of the 80-column summary.
	Summary []Section
}

// A Run is one go test command of a round, run with -count 1.
type Run struct {
	// Pkg is the package, as go test names it: ./bench/.
	Pkg string
	// Bench is the -bench regexp.
	Bench string
	// Benchtime is the -benchtime: a fixed value ("1x"), or empty for
	// the BenchtimeEnv knob's, or for go test's default.
	Benchtime string
	// BenchtimeEnv names the knob that sets the -benchtime; BENCHTIME,
	// where given, sets it for every family whose own knob is unset.
	BenchtimeEnv string
	// Pin runs the command under taskset on make's PIN CPU; Libbpf adds
	// -tags libbpf where libbpf and a C compiler are installed; Benchmem
	// adds -benchmem.
	Pin, Libbpf, Benchmem bool
	// Env are NAME=value settings the command runs with beside the
	// environment, ${KNOB} in a value standing for the family's knob's
	// value: how a family runs another's benchmark with settings of its
	// own (the sweep gives BenchmarkRead its sizes and ring).
	Env []string
	// Benchmarks are the top-level benchmarks -bench selects, for the
	// plan.
	Benchmarks []Benchmark
}

// EnvNow is the run's Env with the knobs' values in place.
func (r Run) EnvNow() []string {
	env := make([]string, len(r.Env))
	for i, e := range r.Env {
		env[i] = Expand(e)
	}
	return env
}

// Expand replaces ${NAME} in s by the value of the knob NAME, the
// environment's or its default (a name no family declares stays as it
// is, for the tests to find).
func Expand(s string) string {
	return os.Expand(s, func(env string) string {
		k, err := Lookup(env)
		if err != nil {
			return "${" + env + "}"
		}
		return k.Raw()
	})
}

// A Benchmark is one top-level benchmark: how many results one run
// gives, the product of its dimensions, and what one result costs on
// the reference host (a 2-vCPU KVM guest on an AMD EPYC), from the wall
// time of the committed reference runs.
type Benchmark struct {
	Name string
	Dims []Dim
	Cost func(Setup) time.Duration
}

// Setup is what a benchmark's plan depends on beyond its knobs.
type Setup struct {
	Libbpf    bool          // built with -tags libbpf
	Benchtime time.Duration // the run's -benchtime; zero for a count (1x)
}

// A Dim is one dimension of a benchmark's sub-benchmarks: how many
// values it has, named for the plan ("4 bad").
type Dim struct {
	Name string
	N    func(Setup) (int, error)
}

// Fixed is a dimension of n values.
func Fixed(n int, name string) Dim {
	return Dim{Name: name, N: func(Setup) (int, error) { return n, nil }}
}

// KnobValues is a dimension of as many values as knob env holds.
func KnobValues(env, name string) Dim {
	return Dim{Name: name, N: func(Setup) (int, error) {
		k, err := Lookup(env)
		if err != nil {
			return 0, err
		}
		return k.Count()
	}}
}

// List is a dimension whose count depends on the setup: modes that
// exist only where the libbpf peer is built.
func List(name string, n func(Setup) int) Dim {
	return Dim{Name: name, N: func(s Setup) (int, error) { return n(s), nil }}
}

// Leaves is how many results one run of b gives, and how they multiply,
// for the plan: "2 filters x 4 bad x 3 payloads x 2 recvs".
func (b Benchmark) Leaves(s Setup) (int, string, error) {
	n := 1
	var how []string
	for _, d := range b.Dims {
		m, err := d.N(s)
		if err != nil {
			return 0, "", fmt.Errorf("%s: %w", b.Name, err)
		}
		n *= m
		how = append(how, fmt.Sprintf("%d %s", m, d.Name))
	}
	return n, strings.Join(how, " x "), nil
}

// A Table is one step of the tables file: a heading line, then a
// benchstat call on the results (Benchstat are its arguments), a tool of
// internal/tools (its name and arguments; the results file is the last),
// or a check of the raw results, which fails the target if it returns an
// error.
type Table struct {
	Heading   string
	Benchstat []string
	Tool      []string
	Check     func(results string, w Printer) error
}

// Printer is where a check writes its lines.
type Printer interface {
	Printf(format string, args ...any)
}

// A Derive makes a file from the results with a tool of internal/tools,
// before the plots: <results base><Suffix>, which the tool's output also
// goes to stdout.
type Derive struct {
	Suffix string
	Tool   []string
}

// A Plot is one benchplot call: Args select and group, the plot is
// written to <results base><Suffix>.svg and .png. With are suffixes of
// derived files drawn beside the results; If names a benchmark (without
// "Benchmark") the results must hold for the plot to be drawn. ${NAME}
// in Args is the value of the family's knob NAME.
type Plot struct {
	Suffix string
	Args   []string
	With   []string
	If     string
}

// families are every family, in the order their files register them.
var families []*Family

// register adds f to the families, for a family's file.
func register(f *Family) *Family {
	families = append(families, f)
	return f
}

// All returns every family, in the order of their targets (make bench
// first).
func All() []*Family {
	all := slices.Clone(families)
	slices.SortFunc(all, func(a, b *Family) int { return strings.Compare(a.Target(), b.Target()) })
	return all
}

// Target is the make target that runs f: bench-<Name>, or its Alias.
func (f *Family) Target() string {
	if f.Alias != "" {
		return f.Alias
	}
	return "bench-" + f.Name
}

// Named returns the family called name (or its alias).
func Named(name string) (*Family, error) {
	var names []string
	for _, f := range All() {
		if f.Name == name || (f.Alias != "" && f.Alias == name) {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return nil, fmt.Errorf("no benchmark family %q; there are %s", name, strings.Join(names, ", "))
}

// Common are the knobs every family takes, beside its own.
var Common = []benchknob.Knob{
	{Env: "COUNT", Kind: benchknob.Int, Doc: "rounds, for any family (its own count knob, where it has one, comes first)"},
	{Env: "BENCHTIME", Kind: benchknob.Duration, Default: "50ms", Doc: "the -benchtime of the drain's runs, and of every timed run whose own knob is unset"},
	{Env: "FULL", Kind: benchknob.Text, Doc: "1 for the reference run, where a family has one: more rounds, more sizes"},
}

// Lookup returns the knob whose variable is env, wherever it is declared.
func Lookup(env string) (benchknob.Knob, error) {
	for _, k := range Common {
		if k.Env == env {
			return k, nil
		}
	}
	for _, f := range families {
		for _, k := range f.Knobs {
			if k.Env == env {
				return k, nil
			}
		}
	}
	return benchknob.Knob{}, fmt.Errorf("no benchmark family declares the knob %s", env)
}

// must reads a knob with read, ending the program on an error: for a
// setting read where no test can fail, a flag's default.
func must[T any](env string, read func(benchknob.Knob) (T, error)) T {
	k, err := Lookup(env)
	if err != nil {
		benchknob.Exit(err)
	}
	v, err := read(k)
	if err != nil {
		benchknob.Exit(err)
	}
	return v
}

// MustInt returns the value of the integer knob env, and exits the
// program with the variable's name if it is malformed.
func MustInt(env string) int { return must(env, benchknob.Knob.Int) }

// MustText returns the value of the knob env as it is written.
func MustText(env string) string {
	return must(env, func(k benchknob.Knob) (string, error) { return k.Raw(), nil })
}

// MustSizes returns the event sizes of the knob env, and exits the
// program with the variable's name if they are malformed.
func MustSizes(env string) []int { return must(env, benchknob.Knob.Sizes) }

// Full reports whether FULL asks for the reference run.
func Full() bool { return os.Getenv("FULL") != "" }

// RoundsNow is how many rounds the family runs: its own count knob, or
// COUNT, or its default (FullRounds with FULL).
func (f *Family) RoundsNow() (int, error) {
	for _, env := range []string{f.RoundsEnv, "COUNT"} {
		if env == "" || os.Getenv(env) == "" {
			continue
		}
		n, err := benchknob.Knob{Env: env, Kind: benchknob.Int}.Int()
		if err == nil && n < 1 {
			err = fmt.Errorf("%s=%d: want at least one round", env, n)
		}
		return n, err
	}
	if Full() && f.FullRounds > 0 {
		return f.FullRounds, nil
	}
	return f.Rounds, nil
}

// BenchtimeNow is run r's -benchtime: its fixed value, or its knob's
// value where set, else BENCHTIME where set, else its knob's default;
// empty for go test's default.
func (r Run) BenchtimeNow() (string, error) {
	if r.Benchtime != "" || r.BenchtimeEnv == "" {
		return r.Benchtime, nil
	}
	k, err := Lookup(r.BenchtimeEnv)
	if err != nil {
		return "", err
	}
	if !k.IsSet() && os.Getenv("BENCHTIME") != "" {
		k = benchknob.Knob{Env: "BENCHTIME", Kind: benchknob.Duration}
	}
	d, err := k.Duration()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// Check parses every knob of the family, and the common ones that are
// set, and returns what is wrong with them.
func (f *Family) Check() error {
	var errs []string
	for _, k := range Common {
		if k.IsSet() {
			if err := k.Check(); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	for _, k := range f.Knobs {
		if err := k.Check(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if _, err := f.RoundsNow(); err != nil {
		errs = append(errs, err.Error())
	}
	for _, r := range f.Runs {
		if _, err := r.BenchtimeNow(); err != nil && !slices.Contains(errs, err.Error()) {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// SetTargetValues puts in the environment the values the make target
// runs the family's knobs with, where the environment has none: a knob's
// Alias, then its Target (TargetFull with FULL). go test and the plan
// then see the same settings.
func (f *Family) SetTargetValues() error {
	for _, k := range f.Knobs {
		if k.IsSet() {
			continue
		}
		v := ""
		switch {
		case k.Alias != "" && os.Getenv(k.Alias) != "":
			v = os.Getenv(k.Alias)
		case Full() && k.TargetFull != "":
			v = k.TargetFull
		case !Full() && k.Target != "":
			v = k.Target
		}
		if v != "" {
			if err := os.Setenv(k.Env, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// knobDuration is the value of a duration knob the plan reads after
// [Family.Check] has passed: zero if it is malformed after all.
func knobDuration(env string) time.Duration {
	k, err := Lookup(env)
	if err != nil {
		return 0
	}
	d, _ := k.Duration()
	return d
}
