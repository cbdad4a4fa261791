package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

// load type-checks the packages at paths in the module at dir for goos.
// With scratch false, dir is this checkout: a package that does not build
// is an error (ours must build on every platform), and the go command may
// not touch go.mod. With scratch true, dir is a scratch module or an
// extracted release: the go command may complete its go.mod and go.sum,
// and a package that does not build for goos (upstream's perf on
// windows) is left out of the result.
func load(dir, goos string, scratch bool, paths []string) (typesByPath, error) {
	env := append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0", "GOWORK=off")
	if scratch {
		env = append(env, "GOFLAGS=-mod=mod")
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes,
		Dir:  dir,
		Env:  env,
	}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, err
	}
	loaded := make(typesByPath)
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			if !scratch {
				return nil, fmt.Errorf("%s does not build for %s: %v", pkg.PkgPath, goos, pkg.Errors[0])
			}
			continue
		}
		loaded[pkg.PkgPath] = pkg.Types
	}
	return loaded, nil
}

// loadUpstream type-checks cilium/ebpf's packages at version in a scratch
// module: a version or a query the go command resolves (latest, main
// where the proxy serves it), or the folder of a checkout (main, a pull
// request), which a replace directive names.
func loadUpstream(version, goos string) (typesByPath, error) {
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
	return load(dir, goos, true, paths)
}

// release is our last release: its name and commit, or why there is none.
type release struct {
	name, commit, why string
}

// findRelease returns the newest v* tag, or else the commit that added
// CHANGELOG.md, which its first entry names v0.1.0.
func findRelease(root string) (release, error) {
	out, err := gitOutput(root, "tag", "--list", "v*", "--sort=-version:refname")
	if err != nil {
		return release{}, err
	}
	if tags := strings.Fields(string(out)); len(tags) > 0 {
		return release{name: tags[0], commit: tags[0]}, nil
	}
	out, err = gitOutput(root, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return release{}, err
	}
	if strings.TrimSpace(string(out)) == "true" {
		return release{why: "a shallow clone hides which commit added CHANGELOG.md (fetch the history: git fetch --unshallow)"}, nil
	}
	out, err = gitOutput(root, "log", "--diff-filter=A", "--format=%H", "--", "CHANGELOG.md")
	if err != nil {
		return release{}, err
	}
	commits := strings.Fields(string(out))
	if len(commits) == 0 {
		return release{why: "no v* tag, and CHANGELOG.md is not committed yet (the commit that adds it is v0.1.0)"}, nil
	}
	// The oldest commit that added it, should it have been removed and
	// added again.
	commit := commits[len(commits)-1]
	return release{name: "v0.1.0 (" + commit[:12] + ", the commit that added CHANGELOG.md)", commit: commit}, nil
}

// extract writes the tree of commit into dir: the module as released.
func extract(root, commit, dir string) error {
	out, err := gitOutput(root, "archive", "--format=tar", commit)
	if err != nil {
		return err
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue // folders come with their files; links are not Go code
		}
		path := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
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

func gitOutput(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(exit.Stderr))
		}
		return nil, err
	}
	return out, nil
}
