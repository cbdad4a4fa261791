// Package modfiles lists the files of this checkout that a commit of it
// would hold: what the Go module proxy zips, and what a throwaway copy
// of the module needs. Git decides, so build output, .cache/ and
// results/ (ignored) stay out, and a file not yet committed counts.
// Extract writes out the files of a commit instead: a release as it was.
package modfiles

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModulePath is the path of the module whose checkout this is.
const ModulePath = "github.com/ebpf-zc/ebpf"

// Root returns the top directory of the git checkout holding dir.
func Root(dir string) (string, error) {
	out, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// List returns the paths, relative to root and slash-separated, of the
// files git tracks or would add (untracked and not ignored), less those
// deleted from the work tree.
func List(root string) ([]string, error) {
	out, err := git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	var files []string
	seen := make(map[string]bool)
	for name := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree: the next commit drops it
		}
		if err != nil {
			return nil, err
		}
		if info.Mode().IsRegular() {
			files = append(files, name)
		}
	}
	return files, nil
}

// Copy copies the files List returns from root into dst, keeping their
// paths: a throwaway module whose go.mod may change freely.
func Copy(root, dst string) error {
	files, err := List(root)
	if err != nil {
		return err
	}
	for _, name := range files {
		src := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Stat(src)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		path := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		// The mode too: scripts stay executable.
		if err := os.WriteFile(path, b, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// Extract writes the files of commit (a hash, a tag, HEAD) into dst,
// keeping their paths and modes: the module as it was at that commit.
func Extract(root, commit, dst string) error {
	// As golang.org/x/mod/zip's CreateFromVCS does: the files as
	// committed, whatever the host's line-ending settings.
	out, err := git(root, "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=tar", commit)
	if err != nil {
		return err
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue // folders come with their files; links are not Go code
		}
		path := filepath.Join(dst, filepath.FromSlash(hdr.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, b, hdr.FileInfo().Mode().Perm()); err != nil {
			return err
		}
	}
}

// Git runs git in dir and returns its output; an error carries git's
// message.
func Git(dir string, args ...string) ([]byte, error) { return git(dir, args...) }

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}
