package vmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
)

// TestPackage is a package that has test files.
type TestPackage struct {
	ImportPath string
	// Dir is the package folder on the host.
	Dir string
	// Rel is the package path inside the module, "." for its root. Logs
	// and guest folders are named after it.
	Rel string
	// HasBenchmarks says whether any test file declares a benchmark; only
	// those packages get a benchmark smoke run.
	HasBenchmarks bool
	// LoadError is set when go list could not load the package; the
	// package is still listed so the failure shows in the summary.
	LoadError string
}

// Name is a file-name-safe form of Rel: "." becomes the module's last
// path element.
func (p TestPackage) Name() string {
	if p.Rel == "." || p.Rel == "" {
		return path.Base(p.ImportPath)
	}
	return p.Rel
}

// listedPackage is the part of `go list -json` output used here.
type listedPackage struct {
	ImportPath   string
	Dir          string
	TestGoFiles  []string
	XTestGoFiles []string
	Module       *struct{ Path, Dir string }
	Error        *struct{ Err string }
}

// ListTestPackages asks go list, in moduleDir, for the packages matching
// patterns and keeps those with test files. Packages are discovered at
// run time because other work adds them all the time.
func ListTestPackages(ctx context.Context, moduleDir string, patterns []string) ([]TestPackage, error) {
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	args := append([]string{"list", "-e", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles,Module,Error"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = moduleDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	return parseGoList(bytes.NewReader(out))
}

func parseGoList(r io.Reader) ([]TestPackage, error) {
	dec := json.NewDecoder(r)
	var pkgs []TestPackage
	for {
		var lp listedPackage
		err := dec.Decode(&lp)
		if errors.Is(err, io.EOF) {
			return pkgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		files := append(append([]string{}, lp.TestGoFiles...), lp.XTestGoFiles...)
		if len(files) == 0 && lp.Error == nil {
			continue
		}
		p := TestPackage{ImportPath: lp.ImportPath, Dir: lp.Dir, Rel: "."}
		if lp.Module != nil && lp.Dir != "" {
			if rel, err := filepath.Rel(lp.Module.Dir, lp.Dir); err == nil {
				p.Rel = filepath.ToSlash(rel)
			}
		}
		if lp.Error != nil {
			p.LoadError = lp.Error.Err
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(lp.Dir, f))
			if err == nil && benchmarkFunc.Match(b) {
				p.HasBenchmarks = true
				break
			}
		}
		pkgs = append(pkgs, p)
	}
}

// benchmarkFunc matches a benchmark declaration as `go test` finds them:
// "Benchmark" followed by nothing or by a character that is not a
// lower-case letter.
var benchmarkFunc = regexp.MustCompile(`(?m)^func Benchmark([^a-z(]\w*)?\(\w+ \*testing\.B\)`)
