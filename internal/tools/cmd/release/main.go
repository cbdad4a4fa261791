// Command release cuts a release of github.com/ebpf-zc/ebpf, whose
// repository carries no tags: a release is the commit that adds its
// entry to CHANGELOG.md. From the checkout's top folder:
//
//	go -C internal/tools run ./cmd/release -version v0.2.0 [-repo DIR]
//
// It makes two commits on the current branch. The first renames
// CHANGELOG.md's "## [Unreleased]" to "## [v0.2.0]", with the sentence
// that says which commit the release is, under a new empty Unreleased
// heading: that commit is v0.2.0. The second names its hash in
// README.md's install line. Then it checks that README.md and
// CHANGELOG.md agree; make test checks the rest (README.md's names
// against the release, an importer following the install line). It
// pushes nothing and tags nothing. Try it on a scratch clone first:
//
//	git clone -q . /tmp/cut && go -C internal/tools run ./cmd/release -version v0.2.0 -repo /tmp/cut
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
	"github.com/ebpf-zc/ebpf/internal/tools/release"
)

func main() {
	version := flag.String("version", "", "the release to cut: vMAJOR.MINOR.PATCH")
	repo := flag.String("repo", ".", "a folder of the checkout to cut it in")
	flag.Parse()
	if *version == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: release -version vX.Y.Z [-repo DIR]")
		os.Exit(2)
	}
	root, err := modfiles.Root(*repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	commit, err := release.CutRelease(root, *version)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	fmt.Printf("release: %s is %s (CHANGELOG.md's entry); README.md's install line names it.\n", *version, commit)
	fmt.Printf("release: make test checks README.md's names against it and installs it as a user would.\n")
	fmt.Printf("release: to tag it later: git tag %s %s\n", *version, commit)
}
