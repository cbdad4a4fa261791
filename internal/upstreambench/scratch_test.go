//go:build linux

package upstreambench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoRoot is this repository's root, two levels up. It skips t where
// there is none: a test VM runs the test binary with its testdata only.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Skipf("needs this repository's checkout around the test (a test VM has only the binary and its testdata): %v", err)
	}
	return dir
}

// requireTool skips t where the command name is not installed, as in a
// test VM, which has neither go nor git.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("the %s command is not installed here (a test VM has none): %v", name, err)
	}
}

// fakePlan plans the fake module with the names drop removed from its API.
func fakePlan(t *testing.T, ours bool, drop ...string) (*Plan, error) {
	t.Helper()
	api, err := DetectAPI(fakeCilium(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range drop {
		delete(api, name)
	}
	side := &Side{Role: "head", Spec: fakeCilium(t), Dir: fakeCilium(t), Commit: "fake", Label: "fake"}
	return NewPlan(side, api, ours, "undefined: ringbuf.Peek")
}

func runNames(p *Plan) []string {
	var names []string
	for _, mode := range p.Run {
		names = append(names, mode.Name)
	}
	return names
}

func TestNewPlanAndGenerate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ours      bool
		drop      []string
		run       []string
		absentWhy map[string]string // mode: part of the reason
		generated []string          // in the generated source
		omitted   []string          // not in it
	}{
		{
			name:      "main's API, our module compiles",
			ours:      true,
			run:       []string{"upstream", "lease-batch", "lease-each", "copy", "peek", "records", "batch"},
			generated: []string{"drainbench.OpenUpstream", "openLease(false)", "openLease(true)", "ours.Modes", "lease.Commit()"},
			omitted:   []string{"// Absent:"},
		},
		{
			name:      "a release without RawReader",
			ours:      true,
			drop:      []string{"NewRawReader", "RawReader.WithLease"},
			run:       []string{"upstream", "copy", "peek", "records", "batch"},
			absentWhy: map[string]string{"lease-batch": "ringbuf has no ringbuf.NewRawReader, ringbuf.RawReader.WithLease", "lease-each": "ringbuf.NewRawReader"},
			generated: []string{"drainbench.OpenUpstream", "ours.Modes", "// Absent: lease-batch (ringbuf has no ringbuf.NewRawReader"},
			omitted:   []string{"openLease", "upstream.RawReader", `"time"`},
		},
		{
			name:      "our module does not compile against it",
			ours:      false,
			run:       []string{"upstream", "lease-batch", "lease-each"},
			absentWhy: map[string]string{"copy": "undefined: ringbuf.Peek", "records": "our module does not compile"},
			generated: []string{"openLease(true)", "// Absent: peek (our module does not compile against it: undefined: ringbuf.Peek)"},
			omitted:   []string{"ours.Modes", "internal/drainbench/ours"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := fakePlan(t, tc.ours, tc.drop...)
			if err != nil {
				t.Fatal(err)
			}
			if got := runNames(plan); !slices.Equal(got, tc.run) {
				t.Errorf("runs %v, want %v", got, tc.run)
			}
			if len(plan.Absent) != len(Modes)-len(tc.run) {
				t.Errorf("absent %v: want every mode that does not run", plan.Absent)
			}
			for mode, why := range tc.absentWhy {
				if !strings.Contains(plan.Absent[mode], why) {
					t.Errorf("mode %s absent for %q, want it to say %q", mode, plan.Absent[mode], why)
				}
			}
			src, err := Generate(plan)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.generated {
				if !bytes.Contains(src, []byte(want)) {
					t.Errorf("generated benchmark lacks %q:\n%s", want, src)
				}
			}
			for _, unwanted := range tc.omitted {
				if bytes.Contains(src, []byte(unwanted)) {
					t.Errorf("generated benchmark has %q:\n%s", unwanted, src)
				}
			}
		})
	}
}

func TestNewPlanNamesMissingReadInto(t *testing.T) {
	plan, err := fakePlan(t, true, "Reader.ReadInto", "Record.RawSample")
	if err == nil {
		t.Fatalf("plan %v for a ringbuf without ReadInto, want an error", runNames(plan))
	}
	if !strings.Contains(err.Error(), "ringbuf.Reader.ReadInto, ringbuf.Record.RawSample") {
		t.Fatalf("error %q does not name the missing names", err)
	}
}

func TestScratchGoMod(t *testing.T) {
	for _, tc := range []struct {
		name string
		side Side
		want string
	}{
		{"checkout", Side{Role: "head", Dir: "/src/cilium", Label: "cilium@abc"}, "replace github.com/cilium/ebpf => /src/cilium\n"},
		{"checkout with a space", Side{Role: "head", Dir: "/src/my cilium", Label: "x"}, "replace github.com/cilium/ebpf => \"/src/my cilium\"\n"},
		{"version", Side{Role: "base", Version: "v0.21.0", Dir: "/cache/ebpf@v0.21.0", Label: "v0.21.0"}, "replace github.com/cilium/ebpf => github.com/cilium/ebpf v0.21.0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gomod := string(scratchGoMod("1.26.8", "/repo", &tc.side))
			for _, want := range []string{tc.want, "module " + ScratchModule + "\n", "replace github.com/ebpf-zc/ebpf => /repo\n", "go 1.26.8\n"} {
				if !strings.Contains(gomod, want) {
					t.Errorf("go.mod lacks %q:\n%s", want, gomod)
				}
			}
		})
	}
}

func TestScratchSetUpOffline(t *testing.T) {
	requireTool(t, "go")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOSUMDB", "off")
	repo := repoRoot(t)
	ourGoMod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := fakePlan(t, true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScratch(filepath.Join(t.TempDir(), "head"), repo, plan)
	if err != nil {
		t.Fatal(err)
	}
	// The scratch module resolves cilium/ebpf to the fake and our module
	// to this repository, whatever their requirements say.
	out, err := s.goCommand("list", "-m", "-f", "{{.Path}} {{.Replace.Dir}}", CiliumModule, OurModule)
	if err != nil {
		t.Fatalf("go list -m: %v\n%s", err, out)
	}
	want := CiliumModule + " " + fakeCilium(t) + "\n" + OurModule + " " + repo + "\n"
	if string(out) != want {
		t.Fatalf("go list -m says\n%swant\n%s", out, want)
	}
	out, err = s.goCommand("list", "-f", "{{.Dir}}", CiliumModule+"/ringbuf")
	if err != nil || strings.TrimSpace(string(out)) != filepath.Join(fakeCilium(t), "ringbuf") {
		t.Fatalf("cilium/ebpf/ringbuf resolves to %s (%v), want the fake's", out, err)
	}

	// The fake has a ringbuf and nothing else: the build must fail and
	// name what our fills need from cilium/ebpf that it lacks.
	err = s.Build()
	if err == nil {
		t.Fatal("built the benchmark against a fake without cilium/ebpf/asm")
	}
	t.Logf("build error: %v", err)
	if !strings.Contains(err.Error(), "github.com/cilium/ebpf/asm") || !strings.Contains(err.Error(), "do not compile against it") {
		t.Fatalf("build error %q does not name the missing package", err)
	}

	after, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil || !bytes.Equal(after, ourGoMod) {
		t.Fatalf("our go.mod changed during the set-up (%v)", err)
	}
}

func TestCompileProblems(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []string
	}{
		{
			name: "missing symbol, twice",
			out: "# github.com/ebpf-zc/ebpf/upstreambench-scratch\n" +
				"/tmp/w/head/drain_bench_test.go:70:13: undefined: upstream.NewRawReader\n" +
				"/tmp/w/head/drain_bench_test.go:70:13: undefined: upstream.NewRawReader\n" +
				"/repo/internal/progs/ringbuf.go:12:2: lease.ReadSample undefined (type upstream.Lease has no field or method ReadSample)\n",
			want: []string{
				"undefined: upstream.NewRawReader (head/drain_bench_test.go:70)",
				"lease.ReadSample undefined (type upstream.Lease has no field or method ReadSample) (progs/ringbuf.go:12)",
			},
		},
		{
			name: "missing package",
			out:  "go: finding module for package github.com/cilium/ebpf/asm\n../progs/ringbuf.go:9:2: module github.com/cilium/ebpf provides package github.com/cilium/ebpf/asm and is replaced but not required\n",
			want: []string{
				"module github.com/cilium/ebpf provides package github.com/cilium/ebpf/asm and is replaced but not required (progs/ringbuf.go:9)",
			},
		},
		{
			name: "newer Go",
			out:  "go: go.mod requires go >= 1.27 (running go 1.26.8; GOTOOLCHAIN=local)\n",
			want: []string{"go.mod requires go >= 1.27 (running go 1.26.8; GOTOOLCHAIN=local)"},
		},
		{name: "no output", out: "", want: []string{"the go command failed without a message"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := compileProblems([]byte(tc.out)); !slices.Equal(got, tc.want) {
				t.Errorf("compileProblems =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
