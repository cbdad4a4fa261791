package release

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// Install is README.md's install line: the release a user gets, and the
// commit that is that release until it is tagged.
type Install struct {
	// Version is the current release.
	Version string
	// Commit is the commit the install line names, as written.
	Commit string
	// Line is the install line's number in README.md.
	Line int
	// Args are the go command's arguments on the line: get, module@commit.
	Args []string
}

// installLine is README.md's install line:
//
//	go get github.com/ebpf-zc/ebpf@<commit>   # v0.2.0; once tagged, @v0.2.0
var installLine = regexp.MustCompile(`^go (get (\S+)@([0-9a-f]{7,40}))\s+# (v\S+); once tagged, @(v\S+)$`)

// currentRelease is README.md's sentence naming the current release.
var currentRelease = regexp.MustCompile(`The current release is \*\*(v[^*]+)\*\*`)

// ParseInstall reads the current release and its commit from README.md:
// one install line, and one "The current release is **vX.Y.Z**" that
// agrees with it.
func ParseInstall(readme string) (Install, error) {
	var found []Install
	var sentences []string
	for i, line := range strings.Split(readme, "\n") {
		for _, m := range currentRelease.FindAllStringSubmatch(line, -1) {
			sentences = append(sentences, m[1])
		}
		m := installLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		if m[2] != ModulePath {
			return Install{}, fmt.Errorf("README.md:%d: the install line gets %s, not %s", i+1, m[2], ModulePath)
		}
		if m[4] != m[5] {
			return Install{}, fmt.Errorf("README.md:%d: the install line names %s and, once tagged, %s", i+1, m[4], m[5])
		}
		found = append(found, Install{Version: m[4], Commit: m[3], Line: i + 1, Args: strings.Fields(m[1])})
	}
	switch {
	case len(found) == 0:
		return Install{}, fmt.Errorf("README.md has no install line (go get %s@<commit>   # vX.Y.Z; once tagged, @vX.Y.Z)", ModulePath)
	case len(found) > 1:
		return Install{}, fmt.Errorf("README.md has %d install lines, on lines %d and %d", len(found), found[0].Line, found[1].Line)
	}
	in := found[0]
	if !isRelease(in.Version) {
		return Install{}, fmt.Errorf("README.md:%d: %s is not a release version (vMAJOR.MINOR.PATCH)", in.Line, in.Version)
	}
	if len(sentences) != 1 || sentences[0] != in.Version {
		return Install{}, fmt.Errorf("README.md: want one \"The current release is **%s**\", as the install line says; found %q", in.Version, sentences)
	}
	return in, nil
}

// SetInstall returns readme with its current release and install line
// naming version and commit.
func SetInstall(readme, version, commit string) (string, error) {
	in, err := ParseInstall(readme)
	if err != nil {
		return "", err
	}
	lines := strings.Split(readme, "\n")
	line := lines[in.Line-1]
	indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	lines[in.Line-1] = indent + InstallLine(version, commit)
	readme = strings.Join(lines, "\n")
	return currentRelease.ReplaceAllString(readme, "The current release is **"+version+"**"), nil
}

// InstallLine is README.md's install line for version at commit.
func InstallLine(version, commit string) string {
	return fmt.Sprintf("go get %s@%s   # %s; once tagged, @%s", ModulePath, commit, version, version)
}

// isRelease reports whether v is a release version as CHANGELOG.md and
// README.md name them: vMAJOR.MINOR.PATCH, canonical.
func isRelease(v string) bool {
	return semver.IsValid(v) && semver.Canonical(v) == v && semver.Prerelease(v) == ""
}

// A Mention is a name README.md may document: a code span that reads as
// a name of ringbuf or perf, or a selector of one in a Go code block.
type Mention struct {
	// Text is the code span as written: MultiReader.Positions(ring).
	Text string
	// Pkg is ringbuf or perf when the span names it (perf.NewCPUReader)
	// or the word before a run of spans does ("perf `Records`,
	// `Batches`"), else empty.
	Pkg string
	// Explicit is set when the span itself names the package.
	Explicit bool
	// Path is the name within the package: Reader, Positions, or a type
	// and its member, MultiReader.Positions.
	Path []string
	// Line is its line in README.md.
	Line int
	// Marks are the versions ("v0.2.0", from "since v0.2.0") and
	// "unreleased" marks of its sentence or table row.
	Marks []string
}

// Name is the mention's name, qualified where README.md qualifies it.
func (m Mention) Name() string {
	name := strings.Join(m.Path, ".")
	if m.Pkg != "" {
		name = m.Pkg + "." + name
	}
	return name
}

// MarkedNewer reports whether the mention's sentence or row marks it as
// newer than version: "unreleased", or "since" a later version.
func (m Mention) MarkedNewer(version string) bool {
	for _, mark := range m.Marks {
		if mark == Unreleased || semver.Compare(mark, version) > 0 {
			return true
		}
	}
	return false
}

// Unreleased is the mark of a name that no release has yet.
const Unreleased = "unreleased"

var (
	// spanName is a code span that reads as a name of ours: an optional
	// package, an exported name and maybe a member, then maybe a call's
	// arguments or a literal's fields.
	spanName = regexp.MustCompile(`^(?:(ringbuf|perf)\.)?([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?(?:\(.*\)|\{.*\})?$`)
	// goSelector is a name of ours in a Go code block.
	goSelector = regexp.MustCompile(`\b(ringbuf|perf)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)
	// mark is what marks a sentence's names as newer than the current
	// release: "since v0.2.0", "unreleased".
	mark = regexp.MustCompile(`(?i)\bsince (v\d+\.\d+\.\d+)\b|\bunreleased\b`)
	// sentenceEnd ends a sentence: a full stop or semicolon before a
	// space or the end of the line.
	sentenceEnd = regexp.MustCompile(`[.;!?](\s|$)`)
	// qualifier is the package named just before a code span: "perf `Records`".
	qualifier = regexp.MustCompile(`\b(ringbuf|perf)(?:'s)? $`)
	// between is what may separate the spans of a run that one qualifier
	// covers: "perf `Records`, `Batches`", "`Peek`/`PeekInto`".
	between  = regexp.MustCompile(`^[\s,/+]*(?:(?:and|or)\s+)?$`)
	listItem = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s`)
)

// Mentions returns the names README.md may document, in order. A mark
// covers the names of its scope: a table row, a heading, or a sentence
// of a paragraph or list item. Names in Go code blocks carry no marks.
func Mentions(readme string) []Mention {
	var (
		mentions []Mention
		scope    []Mention
		marks    []string
		fence    string // the open fence's backquotes or tildes
		goFence  bool
	)
	flush := func() {
		for _, m := range scope {
			m.Marks = slices.Clone(marks)
			mentions = append(mentions, m)
		}
		scope, marks = nil, nil
	}
	for i, line := range strings.Split(readme, "\n") {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				continue
			}
			if goFence {
				for _, m := range goSelector.FindAllStringSubmatch(line, -1) {
					mention := Mention{Text: m[0], Pkg: m[1], Explicit: true, Path: []string{m[2]}, Line: n}
					if m[3] != "" {
						mention.Path = append(mention.Path, m[3])
					}
					mentions = append(mentions, mention)
				}
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			fence = trimmed[:3]
			goFence = strings.TrimSpace(trimmed[3:]) == "go"
			continue
		}
		whole := strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#")
		if trimmed == "" || whole || listItem.MatchString(line) {
			flush()
		}
		scanLine(line, n, whole, &scope, &marks, flush)
		if whole {
			flush()
		}
	}
	flush()
	return mentions
}

// scanLine adds the line's code spans that read as names to scope and
// its marks to marks, in order, and calls flush at each sentence's end
// unless whole (a table row or heading is one scope).
func scanLine(line string, n int, whole bool, scope *[]Mention, marks *[]string, flush func()) {
	text := func(s string) {
		for s != "" {
			end := len(s)
			if !whole {
				if loc := sentenceEnd.FindStringIndex(s); loc != nil {
					end = loc[0] + 1
				}
			}
			for _, m := range mark.FindAllStringSubmatch(s[:end], -1) {
				if m[1] != "" {
					*marks = append(*marks, m[1])
				} else {
					*marks = append(*marks, Unreleased)
				}
			}
			if end == len(s) {
				return
			}
			flush()
			s = s[end:]
		}
	}
	var (
		runPkg  string // the package a run of spans is qualified with
		lastEnd = -1   // where the last span ended, for runs
	)
	for rest, at := line, 0; ; {
		open := strings.IndexByte(rest, '`')
		if open < 0 {
			text(rest)
			return
		}
		ticks := len(rest[open:]) - len(strings.TrimLeft(rest[open:], "`"))
		closeAt := strings.Index(rest[open+ticks:], rest[open:open+ticks])
		if closeAt < 0 {
			text(rest)
			return
		}
		before := rest[:open]
		text(before)
		span := strings.TrimSpace(rest[open+ticks : open+ticks+closeAt])
		switch q := qualifier.FindStringSubmatch(before); {
		case q != nil:
			runPkg = q[1]
		case lastEnd < 0 || !between.MatchString(before):
			runPkg = ""
		}
		if m := spanName.FindStringSubmatch(span); m != nil {
			mention := Mention{Text: span, Pkg: m[1], Explicit: m[1] != "", Path: []string{m[2]}, Line: n}
			if m[3] != "" {
				mention.Path = append(mention.Path, m[3])
			}
			if mention.Pkg == "" {
				mention.Pkg = runPkg
			}
			*scope = append(*scope, mention)
		}
		consumed := open + ticks + closeAt + ticks
		at += consumed
		lastEnd = at
		rest = rest[consumed:]
	}
}
