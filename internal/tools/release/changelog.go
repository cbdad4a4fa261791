package release

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
	"golang.org/x/mod/semver"
)

// ModulePath is the module a release is of.
const ModulePath = modfiles.ModulePath

// Changelog is what the release tooling reads of CHANGELOG.md.
type Changelog struct {
	// Releases are the versions of its "## [vX.Y.Z]" headings, newest
	// first, as the file lists them.
	Releases []string
	// Unreleased is the line of its "## [Unreleased]" heading, 0 if none.
	Unreleased int
	// Entries are the list items under it.
	Entries int
}

// heading is a release's heading: "## [v0.1.0]", "## [Unreleased]".
var heading = regexp.MustCompile(`^## \[([^\]]+)\]`)

// ParseChangelog reads CHANGELOG.md's releases and its Unreleased entry.
// Releases must come newest first, each once.
func ParseChangelog(text string) (Changelog, error) {
	var c Changelog
	in := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = false
			m := heading.FindStringSubmatch(line)
			switch {
			case m == nil:
				continue
			case strings.EqualFold(m[1], "Unreleased"):
				if c.Unreleased != 0 {
					return Changelog{}, fmt.Errorf("CHANGELOG.md:%d: a second Unreleased heading", i+1)
				}
				if len(c.Releases) > 0 {
					return Changelog{}, fmt.Errorf("CHANGELOG.md:%d: the Unreleased heading comes after %s's; it goes first", i+1, c.Releases[0])
				}
				c.Unreleased, in = i+1, true
			case !isRelease(m[1]):
				return Changelog{}, fmt.Errorf("CHANGELOG.md:%d: %q is not a release version (vMAJOR.MINOR.PATCH)", i+1, m[1])
			case len(c.Releases) > 0 && semver.Compare(m[1], c.Releases[len(c.Releases)-1]) >= 0:
				return Changelog{}, fmt.Errorf("CHANGELOG.md:%d: %s after %s: releases go newest first, each once", i+1, m[1], c.Releases[len(c.Releases)-1])
			default:
				c.Releases = append(c.Releases, m[1])
			}
			continue
		}
		if in && listItem.MatchString(line) {
			c.Entries++
		}
	}
	return c, nil
}

// Newest is the newest release, or "" before the first.
func (c Changelog) Newest() string {
	if len(c.Releases) == 0 {
		return ""
	}
	return c.Releases[0]
}

// ReleaseNote is the sentence under a release's heading that says which
// commit is the release, as v0.1.0's does.
func ReleaseNote(version string) string {
	return "The repository carries no tags: " + version + " is the commit that adds\n" +
		"this entry, which README.md's install line names; apicheck compares\n" +
		"with it until a tag exists. Once it is tagged,\n" +
		"`go get " + ModulePath + "@" + version + "`."
}

// Cut returns text with its Unreleased entry made version's: the heading
// renamed, with ReleaseNote under it, and an empty Unreleased heading
// above. The entry must hold something, and version must be newer than
// every release.
func Cut(text, version string) (string, error) {
	if !isRelease(version) {
		return "", fmt.Errorf("%s is not a release version (vMAJOR.MINOR.PATCH)", version)
	}
	c, err := ParseChangelog(text)
	if err != nil {
		return "", err
	}
	switch {
	case c.Unreleased == 0:
		return "", fmt.Errorf("CHANGELOG.md has no \"## [Unreleased]\" heading to release")
	case c.Entries == 0:
		return "", fmt.Errorf("CHANGELOG.md's Unreleased entry is empty: nothing to release")
	case c.Newest() != "" && semver.Compare(version, c.Newest()) <= 0:
		return "", fmt.Errorf("%s is not newer than %s, CHANGELOG.md's newest release", version, c.Newest())
	}
	lines := strings.Split(text, "\n")
	cut := "## [Unreleased]\n\n## [" + version + "]\n\n" + ReleaseNote(version)
	lines[c.Unreleased-1] = cut
	return strings.Join(lines, "\n"), nil
}
