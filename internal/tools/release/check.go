package release

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/tools/api"
	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
)

// State is what README.md and CHANGELOG.md of a checkout say of its
// releases.
type State struct {
	// Root is the checkout's top folder.
	Root   string
	Readme string
	// Install is README.md's install line.
	Install   Install
	Changelog Changelog
	// Commit is the full hash of the commit the install line names, ""
	// if there is none.
	Commit string
	// Cutting is set at the commit that adds CHANGELOG.md's newest
	// release, which README.md can name only in the next commit: the
	// install line names the release before it until then.
	Cutting bool
	// Newest is the commit that adds CHANGELOG.md's newest release where
	// the install line names another, "" if none does.
	Newest string
}

// Read reads the checkout at root: its README.md and CHANGELOG.md, as
// the work tree holds them, and the commits they name.
func Read(root string) (State, error) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return State{}, err
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return State{}, err
	}
	s := State{Root: root, Readme: string(readme)}
	if s.Install, err = ParseInstall(s.Readme); err != nil {
		return State{}, err
	}
	if s.Changelog, err = ParseChangelog(string(changelog)); err != nil {
		return State{}, err
	}
	s.Commit, _ = resolve(root, s.Install.Commit)
	if newest := s.Changelog.Newest(); newest != "" && newest != s.Install.Version {
		if s.Newest, err = ReleaseCommit(root, newest); err != nil {
			return State{}, err
		}
		head, err := resolve(root, "HEAD")
		if err != nil {
			return State{}, err
		}
		s.Cutting = s.Newest != "" && s.Newest == head
	}
	return s, nil
}

// CheckVersions returns what is wrong with the release README.md names:
// it must be CHANGELOG.md's newest, or the one before it at the commit
// that adds the newest; the commit it names must be the one that adds
// that release's entry to CHANGELOG.md, and its tag, if there is one,
// must name that commit.
func (s State) CheckVersions() []string {
	var problems []string
	in, rel := s.Install, s.Changelog.Releases
	switch {
	case len(rel) == 0:
		problems = append(problems, fmt.Sprintf("README.md:%d names %s, but CHANGELOG.md has no release", in.Line, in.Version))
	case in.Version == rel[0]:
	case s.Cutting && len(rel) > 1 && in.Version == rel[1]:
	case s.Cutting:
		problems = append(problems, fmt.Sprintf("README.md:%d names %s: at the commit that adds %s it names the release before, %s", in.Line, in.Version, rel[0], rel[1]))
	case s.Newest != "":
		problems = append(problems, fmt.Sprintf("README.md:%d names %s, but CHANGELOG.md's newest release is %s, commit %s: the install line names it in the commit after it (the second step of go -C internal/tools run ./cmd/release)", in.Line, in.Version, rel[0], s.Newest))
	default:
		problems = append(problems, fmt.Sprintf("README.md:%d names %s, but CHANGELOG.md's newest release is %s (go -C internal/tools run ./cmd/release cuts a release and names it)", in.Line, in.Version, rel[0]))
	}
	if s.Commit == "" {
		return append(problems, fmt.Sprintf("README.md:%d names commit %s, which this repository lacks", in.Line, in.Commit))
	}
	at, err := changelogAt(s.Root, s.Commit)
	if err != nil {
		return append(problems, err.Error())
	}
	if at.Newest() != in.Version {
		problems = append(problems, fmt.Sprintf("README.md:%d names %s at commit %s, whose CHANGELOG.md's newest release is %q", in.Line, in.Version, short(s.Commit), at.Newest()))
	}
	adds, err := ReleaseCommit(s.Root, in.Version)
	switch {
	case err != nil:
		problems = append(problems, err.Error())
	case adds != s.Commit:
		problems = append(problems, fmt.Sprintf("README.md:%d names commit %s for %s, but the commit that adds %s's CHANGELOG.md entry is %q", in.Line, short(s.Commit), in.Version, in.Version, short(adds)))
	}
	if tagged, err := resolve(s.Root, "refs/tags/"+in.Version); err == nil && tagged != s.Commit {
		problems = append(problems, fmt.Sprintf("tag %s is commit %s, but README.md:%d names %s", in.Version, short(tagged), in.Line, short(s.Commit)))
	}
	return problems
}

// Library are the packages whose names README.md documents.
var Library = []string{"ringbuf", "perf"}

// LibraryPaths are their import paths.
func LibraryPaths() []string {
	var paths []string
	for _, name := range Library {
		paths = append(paths, ModulePath+"/"+name)
	}
	return paths
}

// Names are the exported names of the library's packages.
type Names []api.Object

// LoadNames type-checks the library's packages for Linux in the module
// at dir: this checkout (release false) or an extracted release.
func LoadNames(dir string, release bool) (Names, error) {
	pkgs, err := api.Load(dir, "linux", release, LibraryPaths())
	if err != nil {
		return nil, err
	}
	var names Names
	for _, path := range LibraryPaths() {
		pkg := pkgs[path]
		if pkg == nil {
			return nil, fmt.Errorf("%s does not build in %s", path, dir)
		}
		names = append(names, api.Names(pkg)...)
	}
	return names, nil
}

// LoadNamesAt is LoadNames of the module as commit holds it.
func LoadNamesAt(root, commit string) (Names, error) {
	dir, err := os.MkdirTemp("", "release-names-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := modfiles.Extract(root, commit, dir); err != nil {
		return nil, err
	}
	return LoadNames(dir, true)
}

// Resolve returns the objects m names: with a package, that package's;
// without one, either's. A single name is a package-level name, or, if
// there is none of that name, a member of any type (`Positions`).
func (names Names) Resolve(m Mention) []api.Object {
	var found []api.Object
	inPkg := func(o api.Object) bool { return m.Pkg == "" || o.Pkg == m.Pkg }
	want := strings.Join(m.Path, ".")
	for _, o := range names {
		if inPkg(o) && o.Name == want {
			found = append(found, o)
		}
	}
	if len(found) > 0 || len(m.Path) > 1 {
		return found
	}
	for _, o := range names {
		if inPkg(o) && (o.Kind == api.Method || o.Kind == api.Field) && o.Member() == want {
			found = append(found, o)
		}
	}
	return found
}

// A Documented name is a mention that names an object of ours.
type Documented struct {
	Mention
	// Objects are what it names in the release README.md names.
	Objects []api.Object
}

// CheckNames returns what README.md documents that the release it names
// lacks, unmarked, and the names it documents of that release. A mention
// documents a name of ours if it names one in this checkout (current) or
// in the release (released); one that names neither is prose (a kernel
// flag, cilium/ebpf's API), unless its span names ringbuf or perf.
func (s State) CheckNames(current, released Names) (problems []string, documented []Documented) {
	for _, m := range Mentions(s.Readme) {
		now, then := current.Resolve(m), released.Resolve(m)
		switch {
		case len(then) > 0:
			documented = append(documented, Documented{Mention: m, Objects: then})
		case len(now) == 0 && m.Explicit:
			problems = append(problems, fmt.Sprintf("README.md:%d: `%s` names %s, which has no such name", m.Line, m.Text, m.Name()))
		case len(now) == 0:
			// Not ours.
		case m.MarkedNewer(s.Install.Version):
			// Newer than the release, and marked so.
		default:
			problems = append(problems, fmt.Sprintf("README.md:%d: `%s` (%s) is not in %s (commit %s): mark its sentence or table row \"since vX.Y.Z\" (the release that brings it) or \"unreleased\"",
				m.Line, m.Text, qualified(now), s.Install.Version, short(s.Commit)))
		}
	}
	return problems, documented
}

// qualified lists the objects' names as CHANGELOG.md writes them.
func qualified(objects []api.Object) string {
	var names []string
	for _, o := range objects {
		names = append(names, o.Qualified())
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}
