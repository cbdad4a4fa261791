//go:build linux

package benchfamily

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// clearKnobs unsets every knob for the test, so that defaults apply.
func clearKnobs(t *testing.T) {
	t.Helper()
	for _, k := range Common {
		t.Setenv(k.Env, "")
	}
	for _, f := range All() {
		if f.RoundsEnv != "" {
			t.Setenv(f.RoundsEnv, "")
		}
		for _, k := range f.Knobs {
			t.Setenv(k.Env, "")
			if k.Alias != "" {
				t.Setenv(k.Alias, "")
			}
		}
	}
}

// TestDescriptions checks each description for what the tools rely on:
// a name, a page and a reference run that exist, defaults that parse,
// knob names no two families share, -bench regexps that select the
// benchmarks they plan, tables of one kind each, plots naming declared
// knobs.
func TestDescriptions(t *testing.T) {
	needCheckout(t)
	clearKnobs(t)
	seen := map[string]string{}
	for _, k := range Common {
		seen[k.Env] = "common"
	}
	for _, f := range All() {
		t.Run(f.Name, func(t *testing.T) {
			if f.Name == "" || f.What == "" || f.Rounds < 1 {
				t.Errorf("name %q, what %q, rounds %d", f.Name, f.What, f.Rounds)
			}
			if _, err := os.Stat(filepath.Join("../../docs", f.Page)); err != nil {
				t.Errorf("page: %v", err)
			}
			if _, err := os.Stat(filepath.Join("../../testdata", f.Reference)); f.Reference != "" && err != nil {
				t.Errorf("reference run: %v", err)
			}
			if err := f.Check(); err != nil {
				t.Errorf("defaults: %v", err)
			}
			for _, env := range append([]string{f.RoundsEnv}, knobNames(f)...) {
				if env == "" {
					continue
				}
				if other, ok := seen[env]; ok {
					t.Errorf("%s is declared by %s too", env, other)
				}
				seen[env] = f.Name
			}
			for _, r := range f.Runs {
				// go test matches the first element of -bench against the
				// top-level benchmarks, the others against sub-benchmarks.
				levels := benchLevels(r.Bench)
				for _, l := range levels {
					if _, err := regexp.Compile(l); err != nil {
						t.Fatalf("-bench %q: %v", r.Bench, err)
					}
				}
				re := regexp.MustCompile(levels[0])
				if len(r.Benchmarks) == 0 {
					t.Errorf("run %q plans no benchmark", r.Bench)
				}
				for _, b := range r.Benchmarks {
					if !re.MatchString(b.Name) {
						t.Errorf("-bench %q does not select %s", r.Bench, b.Name)
					}
					if n, _, err := b.Leaves(Setup{}); err != nil || n < 1 {
						t.Errorf("%s: %d leaves, %v", b.Name, n, err)
					}
				}
			}
			for _, tb := range f.Tables {
				kinds := 0
				for _, has := range []bool{tb.Benchstat != nil, tb.Tool != nil, tb.Check != nil} {
					if has {
						kinds++
					}
				}
				if kinds != 1 {
					t.Errorf("table %q: %d kinds of step, want 1", tb.Heading, kinds)
				}
			}
			for _, p := range f.Plots {
				for _, a := range p.Args {
					os.Expand(a, func(env string) string {
						if !slices.Contains(knobNames(f), env) {
							t.Errorf("plot %q names ${%s}, which the family does not declare", p.Suffix, env)
						}
						return ""
					})
				}
			}
			for _, r := range f.Runs {
				for _, e := range r.Env {
					name, value, ok := strings.Cut(e, "=")
					if !ok || name == "" {
						t.Errorf("run %q: env %q is not NAME=value", r.Bench, e)
					}
					os.Expand(value, func(env string) string {
						if !slices.Contains(knobNames(f), env) {
							t.Errorf("run %q: env %q names ${%s}, which the family does not declare", r.Bench, e, env)
						}
						return ""
					})
				}
			}
		})
	}
}

// benchLevels splits a -bench regexp as go test does: at each slash
// outside brackets and parentheses, a regexp a level of sub-benchmarks.
func benchLevels(bench string) []string {
	var levels []string
	depth, start := 0, 0
	for i := 0; i < len(bench); i++ {
		switch bench[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				levels = append(levels, bench[start:i])
				start = i + 1
			}
		}
	}
	return append(levels, bench[start:])
}

func knobNames(f *Family) []string {
	var names []string
	for _, k := range f.Knobs {
		names = append(names, k.Env)
	}
	return names
}

// knobRead matches a knob read by name in a benchmark's source: the
// bench package's knobInt(t, "SOCKF_BAD") and MustInt("...").
var knobRead = regexp.MustCompile(`(?:knob\w*\(\w+, |Must\w+\()"([A-Z0-9_]+)"`)

// TestKnobsRead checks that every knob a benchmark reads is declared and
// every declared knob is read, by a benchmark or a plot.
func TestKnobsRead(t *testing.T) {
	needCheckout(t)
	read := map[string]bool{}
	for _, glob := range []string{"../../bench/*_test.go", "../../ringbuf/*bench*_test.go", "../../perf/*bench*_test.go"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range knobRead.FindAllSubmatch(src, -1) {
				env := string(m[1])
				read[env] = true
				if _, err := Lookup(env); err != nil {
					t.Errorf("%s: %v", file, err)
				}
			}
		}
	}
	for _, f := range All() {
		for _, p := range f.Plots {
			for _, a := range p.Args {
				os.Expand(a, func(env string) string { read[env] = true; return "" })
			}
		}
		for _, r := range f.Runs {
			read[r.BenchtimeEnv] = true
			for _, e := range r.Env {
				os.Expand(e, func(env string) string { read[env] = true; return "" })
			}
		}
		for _, k := range f.Knobs {
			if !read[k.Env] {
				t.Errorf("%s declares %s, which nothing reads", f.Name, k.Env)
			}
		}
	}
}

// TestMalformed checks that a malformed value is an error naming the
// variable, where an unset one is the default.
func TestMalformed(t *testing.T) {
	clearKnobs(t)
	for env, value := range map[string]string{
		"SOCKF_BAD": "1,,2", "SOCKF_DURATION": "2", "RINGBUF_BENCH_RING": "64M", "RINGBUF_BENCH_SIZES": "12", "XDP_PPS": "8e4",
	} {
		k, err := Lookup(env)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Check(); err != nil {
			t.Errorf("%s unset: %v", env, err)
		}
		t.Setenv(env, value)
		if err := k.Check(); err == nil || !strings.Contains(err.Error(), env+"=") {
			t.Errorf("%s=%s: %v", env, value, err)
		}
	}
	if _, err := Lookup("SOCKF_BADD"); err == nil {
		t.Error("an undeclared knob found")
	}
}

// needCheckout skips t where the test binary runs outside the checkout,
// whose docs, testdata and benchmark sources it reads: in the kernel
// matrix's VMs, which carry test binaries only.
func needCheckout(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("../../go.mod"); err != nil {
		t.Skipf("the checkout is not here (%v): test binary run outside it", err)
	}
}

func TestBenchLevels(t *testing.T) {
	for bench, want := range map[string][]string{
		"BenchmarkRead$|BenchmarkEndToEnd$": {"BenchmarkRead$|BenchmarkEndToEnd$"},
		"BenchmarkRead$//mode=(copy|peek)$": {"BenchmarkRead$", "", "mode=(copy|peek)$"},
		"BenchmarkX/size=[0-9/]+/a\\/b":     {"BenchmarkX", "size=[0-9/]+", "a\\/b"},
		"BenchmarkXDP":                      {"BenchmarkXDP"},
	} {
		if got := benchLevels(bench); !slices.Equal(got, want) {
			t.Errorf("benchLevels(%q) = %q, want %q", bench, got, want)
		}
	}
}
