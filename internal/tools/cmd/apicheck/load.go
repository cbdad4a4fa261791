package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/tools/api"
	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
	"github.com/ebpf-zc/ebpf/internal/tools/release"
)

// loadUpstream type-checks cilium/ebpf's packages at version in a scratch
// module: a version or a query the go command resolves (latest, main
// where the proxy serves it), or the folder of a checkout (main, a pull
// request), which a replace directive names.
func loadUpstream(version, goos string) (api.Packages, error) {
	dir, err := os.MkdirTemp("", "apicheck-upstream-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	goMod := "module apicheck.invalid/upstream\n\ngo 1.25.0\n"
	checkout, err := filepath.Abs(version)
	if err != nil {
		return nil, err
	}
	info, statErr := os.Stat(checkout)
	isCheckout := statErr == nil && info.IsDir()
	if isCheckout {
		goMod += "\nrequire " + upstreamPath + " v0.0.0\n\nreplace " + upstreamPath + " => " + checkout + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644); err != nil {
		return nil, err
	}
	if !isCheckout {
		if err := goCommand(dir, "get", upstreamPath+"@"+version); err != nil {
			return nil, err
		}
	}
	var paths []string
	for _, name := range libraryPackages {
		paths = append(paths, upstreamPath+"/"+name)
	}
	return api.Load(dir, goos, true, paths)
}

// lastRelease is our last release: its name and commit, or why there is
// none.
type lastRelease struct {
	name, commit, why string
}

// findRelease returns CHANGELOG.md's newest release: its tag where there
// is one, else the commit that adds its entry to CHANGELOG.md, which is
// the release until it is tagged (release.ReleaseCommit).
func findRelease(root string, changelog release.Changelog) (lastRelease, error) {
	version := changelog.Newest()
	if version == "" {
		return lastRelease{why: "CHANGELOG.md names no release yet"}, nil
	}
	if out, err := modfiles.Git(root, "rev-parse", "--verify", "--quiet", "refs/tags/"+version+"^{commit}"); err == nil {
		return lastRelease{name: version, commit: strings.TrimSpace(string(out))}, nil
	}
	out, err := modfiles.Git(root, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return lastRelease{}, err
	}
	if strings.TrimSpace(string(out)) == "true" {
		return lastRelease{why: "a shallow clone hides which commit added " + version + " to CHANGELOG.md (fetch the history: git fetch --unshallow)"}, nil
	}
	commit, err := release.ReleaseCommit(root, version)
	if err != nil {
		return lastRelease{}, err
	}
	if commit == "" {
		return lastRelease{why: version + "'s CHANGELOG.md entry is not committed yet (the commit that adds it is the release)"}, nil
	}
	return lastRelease{name: version + " (" + commit[:12] + ", the commit that adds its CHANGELOG.md entry)", commit: commit}, nil
}

func goCommand(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
