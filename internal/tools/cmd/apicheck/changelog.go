package main

import (
	"regexp"
	"strings"
)

// nameInBackquotes is a qualified Go name in backquotes, as CHANGELOG.md
// writes the API it talks of: `ringbuf.Reader.Peek`.
var nameInBackquotes = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)+)`")

// unreleasedNames returns the qualified names in backquotes under the
// changelog's "## [Unreleased]" heading, up to the next "## " heading:
// the changes the next release announces, and so may make.
func unreleasedNames(changelog string) map[string]bool {
	names := make(map[string]bool)
	in := false
	for line := range strings.Lines(changelog) {
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(strings.ToLower(line), "## [unreleased]")
			continue
		}
		if !in {
			continue
		}
		for _, m := range nameInBackquotes.FindAllStringSubmatch(line, -1) {
			names[m[1]] = true
		}
	}
	return names
}

// qualify turns the object an apidiff message is about into the name
// CHANGELOG.md uses: in package ringbuf, "(*Reader).Peek: removed"
// becomes "ringbuf.Reader.Peek".
func qualify(pkg, message string) string {
	object, _, _ := strings.Cut(message, ": ")
	object = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(object)
	return pkg + "." + object
}
