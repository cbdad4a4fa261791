package release

import (
	"strings"
	"testing"
)

// check runs every check of README.md and CHANGELOG.md on the fixture as
// its work tree holds them, and returns the problems.
func (f fixture) check(t *testing.T) []string {
	t.Helper()
	s, err := Read(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	problems := s.CheckVersions()
	if s.Commit == "" {
		return problems
	}
	current, err := LoadNames(f.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	released, err := LoadNamesAt(f.dir, s.Commit)
	if err != nil {
		t.Fatal(err)
	}
	named, _ := s.CheckNames(current, released)
	return append(problems, named...)
}

// TestCheck runs the checks on README.md variants of the fixture: a
// name the release lacks, marked or not, versions and commits that do
// not match CHANGELOG.md.
func TestCheck(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name string
		// readme is the work tree's README.md, its install line naming
		// version at commit (v010 or later).
		version, commit, body string
		// want are words of the problems, one string each; none if empty.
		want []string
	}{
		{name: "the release's names", version: "v0.1.0", commit: "v010",
			body: "`ringbuf.NewReader`, `Reader.Close` and perf `Records` (`Record{…}` is prose)."},
		{name: "a newer name unmarked", version: "v0.1.0", commit: "v010",
			body: "perf `Records`, `Batches`: loops.",
			want: []string{"`Batches` (perf.Reader.Batches) is not in v0.1.0"}},
		{name: "a newer name qualified", version: "v0.1.0", commit: "v010",
			body: "Loops: `perf.Reader.Batches`.",
			want: []string{"`perf.Reader.Batches` (perf.Reader.Batches) is not in v0.1.0"}},
		{name: "a newer name in Go code", version: "v0.1.0", commit: "v010",
			body: "```go\nr.Records() // perf.Reader.Batches is newer\n```",
			want: []string{"`perf.Reader.Batches` (perf.Reader.Batches) is not in v0.1.0"}},
		{name: "a newer name marked", version: "v0.1.0", commit: "v010",
			body: "perf `Records`, `Batches` (since v0.2.0): loops.\n\n| `Reader.Batches` | a row, unreleased |"},
		{name: "a mark of another sentence", version: "v0.1.0", commit: "v010",
			body: "Loops: `Batches`. Since v0.2.0, more.",
			want: []string{"`Batches`"}},
		{name: "a mark of the release itself", version: "v0.1.0", commit: "v010",
			body: "Loops: `Batches` (since v0.1.0).",
			want: []string{"`Batches`"}},
		{name: "a name nobody has", version: "v0.1.0", commit: "v010",
			body: "`ringbuf.Nope`, `Nope` and `BPF_F_RB_OVERWRITE`.",
			want: []string{"`ringbuf.Nope` names ringbuf.Nope, which has no such name"}},
		{name: "a version CHANGELOG.md lacks", version: "v0.2.0", commit: "v010",
			body: "`ringbuf.NewReader`.",
			want: []string{"names v0.2.0, but CHANGELOG.md's newest release is v0.1.0", "whose CHANGELOG.md's newest release is \"v0.1.0\"", "the commit that adds v0.2.0's CHANGELOG.md entry is \"\""}},
		{name: "a later commit", version: "v0.1.0", commit: "later",
			body: "`ringbuf.NewReader`.",
			want: []string{"names commit " + "LATER" + " for v0.1.0, but the commit that adds v0.1.0's CHANGELOG.md entry is \"" + "V010" + "\""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			commit := map[string]string{"v010": f.v010, "later": f.later}[tt.commit]
			f.write(t, "README.md", f.readme(tt.version, commit, tt.body))
			got := f.check(t)
			if len(got) != len(tt.want) {
				t.Fatalf("problems:\n%s\nwant %d, with %q", strings.Join(got, "\n"), len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				want = strings.NewReplacer("LATER", short(f.later), "V010", short(f.v010)).Replace(want)
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %d: %s\nwant it to say %q", i, got[i], want)
				}
			}
		})
	}
}

// TestCheckTag: a tag of README.md's version must name its commit.
func TestCheckTag(t *testing.T) {
	f := newFixture(t)
	f.write(t, "README.md", f.readme("v0.1.0", f.v010, "`ringbuf.NewReader`."))
	f.git(t, "tag", "v0.1.0", f.later)
	got := f.check(t)
	if len(got) != 1 || !strings.Contains(got[0], "tag v0.1.0 is commit "+short(f.later)) {
		t.Errorf("problems with a misplaced tag:\n%s", strings.Join(got, "\n"))
	}
	f.git(t, "tag", "-f", "v0.1.0", f.v010)
	if got := f.check(t); len(got) > 0 {
		t.Errorf("problems with the tag in place:\n%s", strings.Join(got, "\n"))
	}
}
