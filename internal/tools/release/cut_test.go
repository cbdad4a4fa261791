package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCutRelease cuts v0.2.0 in the fixture, as make test's tools would
// at the end of a release: two commits, the first the release, the
// second naming it; every check passes after each.
func TestCutRelease(t *testing.T) {
	f := newFixture(t)
	f.write(t, "README.md", f.readme("v0.1.0", f.v010, "perf `Records`, `Batches` (since v0.2.0)."))
	f.commit(t, "README: perf.Reader.Batches, since v0.2.0")
	if got := f.check(t); len(got) > 0 {
		t.Fatalf("problems before the cut:\n%s", strings.Join(got, "\n"))
	}

	commit, err := CutRelease(f.dir, "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.git(t, "rev-parse", "HEAD~1"); got != commit {
		t.Errorf("the release is %s, want HEAD~1, %s", commit, got)
	}
	if got := f.git(t, "diff", "--name-only", "HEAD~2", "HEAD~1"); got != "CHANGELOG.md" {
		t.Errorf("the release commit changes %q, want CHANGELOG.md alone", got)
	}
	if got := f.git(t, "diff", "--name-only", "HEAD~1", "HEAD"); got != "README.md" {
		t.Errorf("the commit after it changes %q, want README.md alone", got)
	}
	readme, err := os.ReadFile(filepath.Join(f.dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseInstall(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	if in.Version != "v0.2.0" || in.Commit != commit {
		t.Errorf("README.md names %s at %s, want v0.2.0 at %s", in.Version, in.Commit, commit)
	}
	changelog, err := os.ReadFile(filepath.Join(f.dir, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "## [Unreleased]\n\n## [v0.2.0]\n\n" + ReleaseNote("v0.2.0") + "\n\n### Added\n\n- `perf.Reader.Batches`\n"; !strings.Contains(string(changelog), want) {
		t.Errorf("CHANGELOG.md after the cut:\n%s\nwant it to hold:\n%s", changelog, want)
	}
	if got := f.check(t); len(got) > 0 {
		t.Errorf("problems after the cut:\n%s", strings.Join(got, "\n"))
	}

	// The release commit itself, whose README.md cannot name it yet.
	f.git(t, "checkout", "-q", commit)
	s, err := Read(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Cutting {
		t.Error("at the release commit, Read does not see the cut")
	}
	if got := f.check(t); len(got) > 0 {
		t.Errorf("problems at the release commit:\n%s", strings.Join(got, "\n"))
	}
	// A commit on top of it that forgets README.md's install line.
	f.write(t, "later.txt", "later\n")
	f.commit(t, "a commit that forgets the install line")
	if got := f.check(t); len(got) != 1 || !strings.Contains(got[0], "names v0.1.0, but CHANGELOG.md's newest release is v0.2.0") {
		t.Errorf("problems after a forgotten install line:\n%s", strings.Join(got, "\n"))
	}
}

// TestCutReleaseRefuses: a dirty work tree, an old version, a version
// already tagged, and a README.md that disagrees stop the cut before it
// commits anything.
func TestCutReleaseRefuses(t *testing.T) {
	f := newFixture(t)
	f.write(t, "README.md", f.readme("v0.1.0", f.v010, "`ringbuf.NewReader`."))
	head := f.commit(t, "README")
	for _, tt := range []struct {
		name, version, want string
		setup               func(t *testing.T)
	}{
		{"dirty", "v0.2.0", "the work tree has changes", func(t *testing.T) { f.write(t, "README.md", "changed\n") }},
		{"old", "v0.1.0", "not newer", nil},
		{"tagged", "v0.2.0", "tag v0.2.0 exists", func(t *testing.T) {
			f.git(t, "tag", "v0.2.0")
			t.Cleanup(func() { f.git(t, "tag", "-d", "v0.2.0") })
		}},
		{"disagreeing", "v0.2.0", "disagree before the cut", func(t *testing.T) {
			f.write(t, "README.md", f.readme("v0.1.0", f.later, "x"))
			f.commit(t, "README names the wrong commit")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(func() { f.git(t, "reset", "-q", "--hard", head) })
			if tt.setup != nil {
				tt.setup(t)
			}
			before := f.git(t, "rev-parse", "HEAD")
			_, err := CutRelease(f.dir, tt.version)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CutRelease: %v, want an error with %q", err, tt.want)
			}
			if after := f.git(t, "rev-parse", "HEAD"); after != before {
				t.Errorf("CutRelease committed (%s) though it refused", after)
			}
		})
	}
}
