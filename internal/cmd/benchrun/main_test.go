//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

// TestEveryFamily plans and builds the commands of every family at its
// defaults: some results, a line a benchmark and one for the rounds, a
// go test command a run, pinned where the run asks, and the -bench of
// each run selecting every benchmark it plans.
func TestEveryFamily(t *testing.T) {
	o := options{goCmd: "go", pin: "0"}
	_, tasksetErr := exec.LookPath("taskset")
	for _, f := range benchfamily.All() {
		t.Run(f.Name, func(t *testing.T) {
			rounds, err := f.RoundsNow()
			if err != nil {
				t.Fatal(err)
			}
			pl, err := f.Plan(false, rounds)
			if err != nil {
				t.Fatal(err)
			}
			benchmarks := 0
			for _, r := range f.Runs {
				benchmarks += len(r.Benchmarks)
				cmd, err := command(r, o)
				if err != nil {
					t.Fatal(err)
				}
				if pinned := cmd[0] == "taskset"; pinned != (r.Pin && tasksetErr == nil) {
					t.Errorf("%q: pinned %v, want %v", cmd, pinned, r.Pin)
				}
				if i := slices.Index(cmd, "-bench"); i < 0 || cmd[i+1] != r.Bench || cmd[len(cmd)-1] != r.Pkg {
					t.Errorf("%q: not -bench %q on %s", cmd, r.Bench, r.Pkg)
				}
			}
			if pl.Results == 0 || pl.Cost <= 0 || len(pl.Lines) != benchmarks+min(rounds-1, 1) {
				t.Errorf("%d results in %v, lines %q", pl.Results, pl.Cost, pl.Lines)
			}
		})
	}
}

// TestMalformedKnob checks that a bad value stops the run before it
// starts, naming the variable.
func TestMalformedKnob(t *testing.T) {
	for env, value := range map[string]string{"SOCKF_BAD": "1,x", "SOCKF_DURATION": "2", "SOCKF_COUNT": "0", "COUNT": "six"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, value)
			f, _ := benchfamily.Named("sockfilter")
			err := run(f, "test", filepath.Join(t.TempDir(), "out.txt"), options{goCmd: "false"}, false)
			if err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("%s=%s: %v", env, value, err)
			}
		})
	}
}

// fakeGoEnv, set, makes the test binary stand in for go: it prints
// the sweep's variables and exits, so TestRunEnv needs no shell (the
// kernel matrix's guests have none).
const fakeGoEnv = "BENCHRUN_TEST_FAKE_GO"

func TestMain(m *testing.M) {
	if os.Getenv(fakeGoEnv) != "" {
		fmt.Printf("sizes=%s ring=%s\n", os.Getenv("RINGBUF_BENCH_SIZES"), os.Getenv("RINGBUF_BENCH_RING"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunEnv checks that a run's Env reaches its command with the
// family's knobs in place: the sweep gives BenchmarkRead its sizes.
func TestRunEnv(t *testing.T) {
	dir := t.TempDir()
	fakeGo, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeGoEnv, "1")
	t.Setenv("SWEEP_SIZES", "16,24")
	t.Setenv("SWEEP_RING", "")
	t.Setenv("SWEEP_COUNT", "1")
	t.Setenv("RINGBUF_BENCH_SIZES", "4096")
	f, err := benchfamily.Named("sweep")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.txt")
	if err := run(f, "test", out, options{goCmd: fakeGo}, false); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sizes=16,24 ring=67108864\n"; !strings.Contains(string(got), want) {
		t.Errorf("results file %q, want the line %q", got, want)
	}
}

func TestShellQuote(t *testing.T) {
	got := shellQuote([]string{"benchstat", "-filter", ".name:Read .unit:Mrec/s", "-col", "/mode@(a b)", "it's", "x.txt"})
	want := `benchstat -filter '.name:Read .unit:Mrec/s' -col '/mode@(a b)' 'it'\''s' x.txt`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
