package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a repository of a tiny module named as ours, with a release
// v0.1.0 (the commit that adds its CHANGELOG.md entry) and a name added
// after it (perf.Reader.Batches), for the checks to judge without the
// real history or a network.
type fixture struct {
	dir string
	// v010 is the commit that adds v0.1.0's entry; later, the one after
	// it that adds perf.Reader.Batches.
	v010, later string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git to make the fixture repository with")
	}
	f := fixture{dir: t.TempDir()}
	f.git(t, "init", "-q", "-b", "main")
	// Local settings, as CutRelease's git reads them too.
	f.git(t, "config", "user.name", "Fixture")
	f.git(t, "config", "user.email", "fixture@example.invalid")
	f.git(t, "config", "commit.gpgsign", "false")
	f.write(t, "go.mod", "module "+ModulePath+"\n\ngo 1.25.0\n")
	f.write(t, "ringbuf/reader.go", "// Package ringbuf is a fixture.\npackage ringbuf\n\n// Reader reads.\ntype Reader struct{ Ring int }\n\n// NewReader makes a Reader.\nfunc NewReader() (*Reader, error) { return &Reader{}, nil }\n\n// Close closes.\nfunc (r *Reader) Close() error { return nil }\n")
	f.write(t, "perf/reader.go", "// Package perf is a fixture.\npackage perf\n\n// Reader reads.\ntype Reader struct{}\n\n// Records loops.\nfunc (r *Reader) Records() {}\n")
	f.write(t, "CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n## [v0.1.0]\n\n- `ringbuf.NewReader`\n")
	f.v010 = f.commit(t, "v0.1.0")
	f.write(t, "README.md", f.readme("v0.1.0", f.v010, "`ringbuf.NewReader`, perf `Records`."))
	f.commit(t, "README names v0.1.0")
	f.write(t, "perf/batches.go", "package perf\n\n// Batches loops a batch at a time.\nfunc (r *Reader) Batches() {}\n")
	f.write(t, "CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- `perf.Reader.Batches`\n\n## [v0.1.0]\n\n- `ringbuf.NewReader`\n")
	f.later = f.commit(t, "perf.Reader.Batches")
	return f
}

// readme is a README.md naming version at commit that documents body.
func (f fixture) readme(version, commit, body string) string {
	return "# Fixture\n\nThe current release is **" + version + "**.\n\n```sh\n" +
		InstallLine(version, commit) + "\n```\n\n" + body + "\n"
}

func (f fixture) write(t *testing.T, name, content string) {
	t.Helper()
	path := filepath.Join(f.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commit commits every change and returns its hash.
func (f fixture) commit(t *testing.T, message string) string {
	t.Helper()
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", message)
	return f.git(t, "rev-parse", "HEAD")
}

func (f fixture) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
