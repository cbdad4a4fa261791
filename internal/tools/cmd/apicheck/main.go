// Command apicheck checks that the API of ringbuf and perf keeps the
// promises CHANGELOG.md makes, with apidiff (golang.org/x/exp/apidiff):
//
//   - against cilium/ebpf (v0.22.0 by default): no incompatible change,
//     so that switching stays a change of import path;
//   - against our last release (CHANGELOG.md's newest: its tag, or else
//     the commit that adds its entry, which is the release until it is
//     tagged): no incompatible change that CHANGELOG.md's Unreleased
//     section does not name.
//
// Each on linux and windows, the platforms whose API differs. make test
// runs it from the checkout's top folder:
//
//	apicheck [-upstream v0.22.0[,../cilium-ebpf]] [-goos linux,windows] [-v]
//
// Upstream versions are fetched through the Go module proxy into a
// scratch module; a checkout folder (cilium/ebpf main, which the proxy
// may not serve) is named there by a replace directive. The release is
// read from git.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/tools/api"
	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
	"github.com/ebpf-zc/ebpf/internal/tools/release"
	"golang.org/x/exp/apidiff"
)

// libraryPackages are the library's public packages, by name: ours under
// modfiles.ModulePath, upstream's under upstreamPath.
var libraryPackages = []string{"ringbuf", "perf"}

const upstreamPath = "github.com/cilium/ebpf"

func main() {
	upstream := flag.String("upstream", "v0.22.0", "comma-separated cilium/ebpf versions, queries (latest) or checkout folders to check against")
	goosList := flag.String("goos", "linux,windows", "comma-separated GOOS values to check")
	verbose := flag.Bool("v", false, "list compatible changes (additions) too")
	flag.Parse()
	if err := run(*upstream, strings.Split(*goosList, ","), *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
}

func run(upstream string, goosList []string, verbose bool) error {
	root, err := modfiles.Root(".")
	if err != nil {
		return err
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return err
	}
	named := unreleasedNames(string(changelog))
	parsed, err := release.ParseChangelog(string(changelog))
	if err != nil {
		return err
	}
	last, err := findRelease(root, parsed)
	if err != nil {
		return err
	}
	var releaseDir string
	if last.commit != "" {
		if releaseDir, err = os.MkdirTemp("", "apicheck-release-"); err != nil {
			return err
		}
		defer os.RemoveAll(releaseDir)
		if err := modfiles.Extract(root, last.commit, releaseDir); err != nil {
			return err
		}
	} else {
		fmt.Printf("apicheck: no release to compare with: %s\n", last.why)
	}

	failed := 0
	for _, goos := range goosList {
		ours, err := api.Load(root, goos, false, ourPaths())
		if err != nil {
			return fmt.Errorf("ours: %w", err)
		}
		for _, version := range strings.Split(upstream, ",") {
			theirs, err := loadUpstream(version, goos)
			if err != nil {
				return fmt.Errorf("cilium/ebpf %s: %w", version, err)
			}
			for _, name := range libraryPackages {
				old := theirs[upstreamPath+"/"+name]
				if old == nil {
					fmt.Printf("apicheck: %s (%s) against cilium/ebpf %s: upstream does not build there, nothing to compare\n", name, goos, version)
					continue
				}
				against := "cilium/ebpf " + version
				failed += report(name, goos, against, apidiff.Changes(old, ours[modfiles.ModulePath+"/"+name]), nil, verbose)
			}
		}
		if releaseDir == "" {
			continue
		}
		prev, err := api.Load(releaseDir, goos, true, ourPaths())
		if err != nil {
			return fmt.Errorf("release %s: %w", last.name, err)
		}
		for _, name := range libraryPackages {
			path := modfiles.ModulePath + "/" + name
			if prev[path] == nil {
				continue // a package the release did not have: all of it is new
			}
			failed += report(name, goos, "release "+last.name, apidiff.Changes(prev[path], ours[path]), named, verbose)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d incompatible API changes (see above)", failed)
	}
	return nil
}

// report prints the changes of package name on goos and returns how many
// are incompatible and not allowed: every one when allowed is nil (the
// switching promise has no exceptions), else those whose qualified name
// CHANGELOG.md's Unreleased section does not hold.
func report(name, goos, against string, r apidiff.Report, allowed map[string]bool, verbose bool) int {
	var bad, compatible, excused []string
	for _, c := range r.Changes {
		switch {
		case c.Compatible:
			compatible = append(compatible, c.Message)
		case allowed != nil && allowed[qualify(name, c.Message)]:
			excused = append(excused, c.Message)
		default:
			bad = append(bad, c.Message)
		}
	}
	fmt.Printf("apicheck: %s (%s) against %s: %d incompatible, %d named in CHANGELOG.md, %d compatible\n",
		name, goos, against, len(bad), len(excused), len(compatible))
	for _, m := range bad {
		fmt.Printf("  incompatible: %s.%s\n", name, m)
	}
	for _, m := range excused {
		fmt.Printf("  named in CHANGELOG.md: %s.%s\n", name, m)
	}
	if verbose {
		for _, m := range compatible {
			fmt.Printf("  compatible: %s.%s\n", name, m)
		}
	}
	if len(bad) > 0 && allowed != nil {
		fmt.Printf("  an intended break is named under CHANGELOG.md's Unreleased heading, in backquotes: `%s`\n", qualify(name, bad[0]))
	}
	return len(bad)
}

func ourPaths() []string {
	var paths []string
	for _, name := range libraryPackages {
		paths = append(paths, modfiles.ModulePath+"/"+name)
	}
	return paths
}
