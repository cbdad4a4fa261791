package release

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CutRelease makes version in the checkout at root, in two commits: the
// first turns CHANGELOG.md's Unreleased entry into version's, under an
// empty Unreleased heading, and so is the release; the second names that
// commit in README.md's install line. The work tree must be clean,
// README.md must name CHANGELOG.md's newest release, and version must
// be newer and untagged. It returns the release's commit.
func CutRelease(root, version string) (string, error) {
	if status, err := git(root, "status", "--porcelain", "--untracked-files=no"); err != nil {
		return "", err
	} else if status != "" {
		return "", fmt.Errorf("the work tree has changes; commit or stash them first:\n%s", status)
	}
	if _, err := resolve(root, "refs/tags/"+version); err == nil {
		return "", fmt.Errorf("tag %s exists already", version)
	}
	s, err := Read(root)
	if err != nil {
		return "", err
	}
	if problems := s.CheckVersions(); len(problems) > 0 {
		return "", fmt.Errorf("README.md and CHANGELOG.md disagree before the cut:\n%s", strings.Join(problems, "\n"))
	}
	if s.Cutting {
		return "", fmt.Errorf("HEAD adds %s to CHANGELOG.md: its install line is the next step, not a new cut", s.Changelog.Newest())
	}

	changelogPath := filepath.Join(root, "CHANGELOG.md")
	changelog, err := os.ReadFile(changelogPath)
	if err != nil {
		return "", err
	}
	cut, err := Cut(string(changelog), version)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(changelogPath, []byte(cut), 0o644); err != nil {
		return "", err
	}
	if _, err := git(root, "commit", "--quiet", "-m", version+": CHANGELOG.md's Unreleased entry becomes "+version+"'s\n\n"+
		"The repository carries no tags, so this commit is "+version+": the commit\n"+
		"that adds its entry. The next names it in README.md's install line,\n"+
		"which cannot name the commit it is in.", "--", "CHANGELOG.md"); err != nil {
		return "", err
	}
	commit, err := resolve(root, "HEAD")
	if err != nil {
		return "", err
	}

	readme, err := SetInstall(s.Readme, version, commit)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(readme), 0o644); err != nil {
		return "", err
	}
	if _, err := git(root, "commit", "--quiet", "-m", "README.md: install "+version+" by its commit, "+short(commit)+"\n\n"+
		version+" is "+commit+", the commit that adds its\n"+
		"CHANGELOG.md entry; until it is tagged, go get names the commit.", "--", "README.md"); err != nil {
		return "", err
	}

	after, err := Read(root)
	if err != nil {
		return "", err
	}
	if problems := after.CheckVersions(); len(problems) > 0 {
		return "", fmt.Errorf("after the cut, README.md and CHANGELOG.md disagree:\n%s", strings.Join(problems, "\n"))
	}
	return commit, nil
}
