//go:build linux

package upstreambench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// CiliumModule is the module path a side must have.
const CiliumModule = "github.com/cilium/ebpf"

// Side is one version of cilium/ebpf to measure: a module version fetched
// by the go command, or a directory holding a checkout.
type Side struct {
	// Role is "base" or "head", as the Makefile names them BASE and UPSTREAM.
	Role string
	// Spec is what the user gave: a version or a path.
	Spec string
	// Version is the module version for a fetched side, empty for a directory.
	Version string
	// Dir is the side's source: the checkout, or the module cache's copy.
	Dir string
	// Commit is the git commit of a checkout, with "+dirty" when tracked
	// files differ from it; a version's commit is its version.
	Commit string
	// Label names the side in tables and plots.
	Label string
}

// versionPattern matches a semantic version as go.mod writes one.
var versionPattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+incompatible)?$`)

// ResolveSide checks that spec names a cilium/ebpf module, a directory or
// a version, and says what is wrong if not. Checking a directory runs no
// network and takes milliseconds; a version is downloaded into the module
// cache unless it is there.
func ResolveSide(role, spec string) (*Side, error) {
	name := makeVariable(role)
	if spec == "" {
		return nil, fmt.Errorf("%s is empty: give a path to a cilium/ebpf checkout", name)
	}
	side := &Side{Role: role, Spec: spec}
	if versionPattern.MatchString(spec) {
		if _, err := os.Stat(spec); err != nil {
			dir, err := downloadModule(spec)
			if err != nil {
				return nil, fmt.Errorf("%s=%s: %w", name, spec, err)
			}
			side.Version, side.Dir, side.Commit, side.Label = spec, dir, spec, spec
			return side, nil
		}
	}
	dir, err := filepath.Abs(spec)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", name, spec, err)
	}
	if err := checkModuleDir(dir); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", name, spec, err)
	}
	side.Dir = dir
	side.Commit, side.Label = gitCommit(dir)
	return side, nil
}

// makeVariable names a role as the Makefile's variable for it does.
func makeVariable(role string) string {
	if role == "head" {
		return "UPSTREAM"
	}
	return strings.ToUpper(role)
}

// checkModuleDir fails unless dir is a directory holding the module
// github.com/cilium/ebpf with a ringbuf package.
func checkModuleDir(dir string) error {
	info, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no such directory")
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return errors.New("not a directory: want a cilium/ebpf checkout")
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no go.mod here: not a Go module, want a cilium/ebpf checkout")
	}
	if err != nil {
		return err
	}
	path := modulePath(gomod)
	if path != CiliumModule {
		return fmt.Errorf("go.mod names module %q, not %s", path, CiliumModule)
	}
	if info, err := os.Stat(filepath.Join(dir, "ringbuf")); err != nil || !info.IsDir() {
		return errors.New("module github.com/cilium/ebpf without a ringbuf package: nothing to measure")
	}
	return nil
}

// modulePath returns the path of a go.mod's module directive, or "" if it
// has none. It reads the one-line form every go.mod uses, with or without
// quotes and a trailing comment.
func modulePath(gomod []byte) string {
	for fields := range goModFields(gomod) {
		if len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], "\"`")
		}
	}
	return ""
}

// goModFields yields the words of each line of a go.mod, comments dropped.
func goModFields(gomod []byte) iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		for line := range strings.Lines(string(gomod)) {
			if !yield(strings.Fields(strings.SplitN(line, "//", 2)[0])) {
				return
			}
		}
	}
}

// gitCommit names a checkout's commit and a short label for it; a
// directory outside git is named for itself.
func gitCommit(dir string) (commit, label string) {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)", filepath.Base(dir)
	}
	commit = strings.TrimSpace(string(out))
	label = filepath.Base(dir) + "@" + commit[:min(len(commit), 12)]
	status, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		commit += "+dirty"
		label += "+dirty"
	}
	return commit, label
}

// downloadModule fetches cilium/ebpf at version into the module cache (or
// finds it there) and returns its directory.
func downloadModule(version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", CiliumModule+"@"+version)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=", "GOWORK=off")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jsonErr := json.Unmarshal(out, &info); jsonErr == nil && info.Error != "" {
		return "", errors.New(info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download: %w", err)
	}
	if info.Dir == "" {
		return "", errors.New("go mod download named no directory")
	}
	return info.Dir, nil
}

// PinnedVersion returns the cilium/ebpf version the go.mod in repo
// requires: the default base.
func PinnedVersion(repo string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return "", err
	}
	for fields := range goModFields(gomod) {
		if fields = trimRequire(fields); len(fields) == 2 && fields[0] == CiliumModule {
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("%s/go.mod does not require %s", repo, CiliumModule)
}

// trimRequire drops the "require" keyword of a one-line require directive.
func trimRequire(fields []string) []string {
	if len(fields) > 0 && fields[0] == "require" {
		return fields[1:]
	}
	return fields
}
