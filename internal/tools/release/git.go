package release

import (
	"fmt"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
)

// git runs git in root and returns its output, trimmed.
func git(root string, args ...string) (string, error) {
	out, err := modfiles.Git(root, args...)
	return strings.TrimSpace(string(out)), err
}

// resolve returns the full hash of the commit rev names, or an error if
// there is none.
func resolve(root, rev string) (string, error) {
	return git(root, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
}

// shallow reports whether root is a shallow clone, whose history may lack
// the commits README.md and CHANGELOG.md speak of.
func shallow(root string) (bool, error) {
	out, err := git(root, "rev-parse", "--is-shallow-repository")
	return out == "true", err
}

// ReleaseCommit returns the commit that is version: the one that adds
// its heading to CHANGELOG.md, the oldest should it have been removed
// and added again. It returns "" if no commit has the heading.
func ReleaseCommit(root, version string) (string, error) {
	out, err := git(root, "log", "--format=%H", "-S", "## ["+version+"]", "--", "CHANGELOG.md")
	if err != nil {
		return "", err
	}
	commits := strings.Fields(out)
	if len(commits) == 0 {
		return "", nil
	}
	return commits[len(commits)-1], nil
}

// changelogAt returns CHANGELOG.md as commit holds it, parsed.
func changelogAt(root, commit string) (Changelog, error) {
	text, err := git(root, "show", commit+":CHANGELOG.md")
	if err != nil {
		return Changelog{}, fmt.Errorf("CHANGELOG.md at %s: %w", short(commit), err)
	}
	return ParseChangelog(text)
}

// short is a commit's hash as pseudo-versions write it: 12 digits.
func short(commit string) string {
	return commit[:min(12, len(commit))]
}
