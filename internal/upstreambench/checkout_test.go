//go:build linux

package upstreambench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveSideRejects(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	noRingbuf := t.TempDir()
	writeFile(t, filepath.Join(noRingbuf, "go.mod"), "module github.com/cilium/ebpf\n")
	for _, tc := range []struct {
		name, role, spec, want string
	}{
		{"empty", "head", "", "UPSTREAM is empty"},
		{"nonexistent", "head", "/nonexistent", "UPSTREAM=/nonexistent: no such directory"},
		{"a file", "head", file, "not a directory"},
		{"no go.mod", "base", empty, "BASE=" + empty + ": no go.mod here"},
		{"another module", "head", filepath.Join("testdata", "othermodule"), `names module "example.com/other", not github.com/cilium/ebpf`},
		{"no ringbuf", "head", noRingbuf, "without a ringbuf package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			side, err := ResolveSide(tc.role, tc.spec)
			if err == nil {
				t.Fatalf("ResolveSide(%q) = %+v, want an error", tc.spec, side)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ResolveSide(%q): %v, want it to say %q", tc.spec, err, tc.want)
			}
		})
	}
}

func TestResolveSideCheckout(t *testing.T) {
	requireTool(t, "git")
	// A copy of the fake in a git repository of its own, as a reviewer's
	// checkout of a pull request would be.
	dir := filepath.Join(t.TempDir(), "pr-1234")
	if err := os.CopyFS(dir, os.DirFS(fakeCilium(t))); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fake")
	head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))

	side, err := ResolveSide("head", dir)
	if err != nil {
		t.Fatal(err)
	}
	if side.Dir != dir || side.Commit != head || side.Label != "pr-1234@"+head[:12] || side.Version != "" {
		t.Fatalf("clean checkout resolved to %+v, want dir %s, commit %s, label pr-1234@%s", side, dir, head, head[:12])
	}

	writeFile(t, filepath.Join(dir, "ebpf.go"), "package ebpf\n")
	side, err = ResolveSide("head", dir)
	if err != nil {
		t.Fatal(err)
	}
	if side.Commit != head+"+dirty" || !strings.HasSuffix(side.Label, "+dirty") {
		t.Fatalf("changed checkout resolved to commit %q, label %q; want both marked +dirty", side.Commit, side.Label)
	}

	plain := filepath.Join(t.TempDir(), "tarball")
	if err := os.CopyFS(plain, os.DirFS(fakeCilium(t))); err != nil {
		t.Fatal(err)
	}
	side, err = ResolveSide("base", plain)
	if err != nil {
		t.Fatal(err)
	}
	if side.Label != "tarball" || !strings.Contains(side.Commit, "not a git checkout") {
		t.Fatalf("plain directory resolved to label %q, commit %q; want its name and no commit", side.Label, side.Commit)
	}
}

func TestGoModParsing(t *testing.T) {
	for _, tc := range []struct {
		name, gomod, module, pinned string
	}{
		{"one-line require", "module github.com/ebpf-zc/ebpf\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n",
			"github.com/ebpf-zc/ebpf", "v0.22.0"},
		{"require block and comments", "// comment\nmodule \"github.com/cilium/ebpf\" // quoted\n\nrequire (\n\tgolang.org/x/sys v0.49.0\n\tgithub.com/cilium/ebpf v0.21.0 // indirect\n)\n",
			"github.com/cilium/ebpf", "v0.21.0"},
		{"no module, no require", "go 1.26\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := modulePath([]byte(tc.gomod)); got != tc.module {
				t.Errorf("modulePath = %q, want %q", got, tc.module)
			}
			repo := t.TempDir()
			writeFile(t, filepath.Join(repo, "go.mod"), tc.gomod)
			got, err := PinnedVersion(repo)
			if (err != nil) != (tc.pinned == "") || got != tc.pinned {
				t.Errorf("PinnedVersion = %q, %v; want %q", got, err, tc.pinned)
			}
		})
	}
}

// writeFile writes content to path or fails t.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git in dir and returns its output, failing t if it fails.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
