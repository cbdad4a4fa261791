//go:build linux

package upstreambench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// OurModule is this repository's module path.
const OurModule = "github.com/ebpf-zc/ebpf"

// ScratchModule is the path of every scratch module. It lies under
// OurModule, so the benchmark may import our internal packages, and names
// a directory our module does not have, so no package is ambiguous.
const ScratchModule = OurModule + "/upstreambench-scratch"

// benchFileName is the generated benchmark's file in a scratch module.
const benchFileName = "drain_bench_test.go"

// Scratch is the module in which one side's benchmark is built.
type Scratch struct {
	// Dir holds go.mod, go.sum and the generated benchmark.
	Dir string
	// Repo is this repository's root, which the scratch module replaces
	// our module with.
	Repo string
	// Plan is what the side's benchmark runs.
	Plan *Plan
	// Binary is the built test binary, once Build has run.
	Binary string
}

// NewScratch writes a scratch module for plan's side in dir: a go.mod
// that replaces cilium/ebpf with the side and our module with repo, our
// go.sum to start from, and the benchmark generated for plan.
func NewScratch(dir, repo string, plan *Plan) (*Scratch, error) {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	goVersion, err := goDirective(repo)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Scratch{Dir: dir, Repo: repo, Plan: plan}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), scratchGoMod(goVersion, repo, plan.Side), 0o644); err != nil {
		return nil, err
	}
	// Our go.sum covers our requirements, so a base at the pinned version
	// needs nothing from the network; tidy adds what a checkout needs.
	sums, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		return nil, err
	}
	return s, s.generate()
}

// generate writes the benchmark for s.Plan.
func (s *Scratch) generate() error {
	src, err := Generate(s.Plan)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, benchFileName), src, 0o644)
}

// scratchGoMod is the go.mod of a scratch module. cilium/ebpf is replaced
// for every version, so that our module's requirement of the pinned
// release resolves to the side too.
func scratchGoMod(goVersion, repo string, side *Side) []byte {
	target := quotePath(side.Dir)
	if side.Version != "" {
		target = CiliumModule + " " + side.Version
	}
	return fmt.Appendf(nil, `// Scratch module of upstreambench: cilium/ebpf at %s (%s).
module %s

go %s

require (
	%s v0.0.0-00010101000000-000000000000
	%s v0.0.0-00010101000000-000000000000
)

replace %s => %s

replace %s => %s
`, side.Label, side.Role, ScratchModule, goVersion,
		CiliumModule, OurModule,
		CiliumModule, target,
		OurModule, quotePath(repo))
}

// quotePath quotes a directory for go.mod if it holds a space or a quote.
func quotePath(dir string) string {
	if strings.ContainsAny(dir, " \t\"'`") {
		return fmt.Sprintf("%q", dir)
	}
	return dir
}

// goDirective returns the go version the go.mod in repo asks for.
func goDirective(repo string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("our module: %w", err)
	}
	for fields := range goModFields(gomod) {
		if len(fields) == 2 && fields[0] == "go" {
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("%s/go.mod has no go directive", repo)
}

// Build resolves the scratch module's requirements and builds the test
// binary. If our reader does not compile against the side, our modes
// become absent and the benchmark is generated again without them; if
// the shared fills or the upstream modes do not, Build fails and names
// what the compiler could not find.
func (s *Scratch) Build() error {
	label := s.Plan.Side.Label
	// -e: a package the side lacks is the compiler's to name, below.
	if out, err := s.goCommand("mod", "tidy", "-e"); err != nil {
		return fmt.Errorf("cilium/ebpf at %s: go mod tidy in %s: %w\n%s", label, s.Dir, err, out)
	}
	if out, err := s.goCommand("build", OurModule+"/internal/drainbench"); err != nil {
		return fmt.Errorf("cilium/ebpf at %s: our fills and checks (internal/drainbench, internal/progs) do not compile against it:\n%s",
			label, indent(compileProblems(out)))
	}
	if s.Plan.Has("copy") {
		if out, err := s.goCommand("build", OurModule+"/internal/drainbench/ours"); err != nil {
			plan, err := NewPlan(s.Plan.Side, s.Plan.API, false, strings.Join(compileProblems(out), "; "))
			if err != nil {
				return err
			}
			s.Plan = plan
			if err := s.generate(); err != nil {
				return err
			}
		}
	}
	s.Binary = filepath.Join(s.Dir, s.Plan.Side.Role+".test")
	if out, err := s.goCommand("test", "-c", "-o", s.Binary, "."); err != nil {
		return fmt.Errorf("cilium/ebpf at %s: the generated benchmark (%s) does not compile against it:\n%s",
			label, filepath.Join(s.Dir, benchFileName), indent(compileProblems(out)))
	}
	return nil
}

// goCommand runs the go command in the scratch module: with the local
// toolchain only (a side that wants a newer Go says so instead of
// fetching one), outside any workspace, free to update go.mod and go.sum.
func (s *Scratch) goCommand(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=-mod=mod")
	return cmd.CombinedOutput()
}

// compilerMessage matches a compiler diagnostic, file:line:col: message.
var compilerMessage = regexp.MustCompile(`^(\S+\.go):(\d+)(?::\d+)?: (.*)$`)

// compileProblems reduces go build output to what went wrong: each
// compiler message with the file and line it names (the missing symbol is
// in the message), and the go command's own errors (a package the side
// lacks, a Go version it wants), without duplicates or progress lines.
func compileProblems(out []byte) []string {
	var problems []string
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		var problem string
		switch m := compilerMessage.FindStringSubmatch(line); {
		case m != nil:
			problem = fmt.Sprintf("%s (%s:%s)", m[3], shortPath(m[1]), m[2])
		case line == "", strings.HasPrefix(line, "#"), strings.HasPrefix(line, "note:"),
			strings.HasPrefix(line, "go: finding module"), strings.HasPrefix(line, "go: downloading"):
			continue // progress, and headers of what follows
		default:
			problem = strings.TrimPrefix(line, "go: ")
		}
		if !seen[problem] {
			seen[problem] = true
			problems = append(problems, problem)
		}
	}
	if len(problems) == 0 {
		return []string{"the go command failed without a message"}
	}
	return problems
}

// shortPath keeps the last two elements of a path: enough to find the
// file in our tree or the side's.
func shortPath(path string) string {
	dir, file := filepath.Split(filepath.Clean(path))
	return filepath.Join(filepath.Base(dir), file)
}

// indent lists problems one a line, indented.
func indent(problems []string) string {
	var b bytes.Buffer
	for _, p := range problems {
		fmt.Fprintf(&b, "\t%s\n", p)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
