package release

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// WriteProxy writes into dir a file GOPROXY (GOPROXY=file://dir) that
// serves commit of the checkout at root as the Go module proxy would:
// as tagged, when tag is a version, which it lists; else as the
// pseudo-version a commit of a repository without tags gets. Each of
// queries (the commit as README.md names it, a tag) resolves to it. The
// zip is made by golang.org/x/mod/zip, as the go command makes it. It
// returns the version served.
func WriteProxy(dir, root, commit, tag string, queries []string) (string, error) {
	when, err := git(root, "show", "-s", "--format=%cI", commit)
	if err != nil {
		return "", err
	}
	t, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return "", err
	}
	t = t.UTC()
	version := tag
	if version == "" {
		version = module.PseudoVersion("", "", t, short(commit))
	}
	escaped, err := module.EscapePath(ModulePath)
	if err != nil {
		return "", err
	}
	at := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return "", err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t})
	if err != nil {
		return "", err
	}
	for _, query := range append([]string{version}, queries...) {
		if err := os.WriteFile(filepath.Join(at, query+".info"), info, 0o644); err != nil {
			return "", err
		}
	}
	if tag != "" {
		if err := os.WriteFile(filepath.Join(at, "list"), []byte(tag+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	goMod, err := modfiles.Git(root, "show", commit+":go.mod")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(at, version+".mod"), goMod, 0o644); err != nil {
		return "", err
	}
	return version, writeZip(filepath.Join(at, version+".zip"), root, commit, module.Version{Path: ModulePath, Version: version})
}

// writeZip writes the module zip of commit to path: from git, as the go
// command zips a commit, or, where x/mod/zip cannot read the repository
// at root (a git worktree), from the commit's files extracted.
func writeZip(path, root, commit string, mod module.Version) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	err = modzip.CreateFromVCS(f, mod, root, commit, "")
	if unrecognized := (*modzip.UnrecognizedVCSError)(nil); errors.As(err, &unrecognized) {
		err = zipExtracted(f, root, commit, mod)
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// zipExtracted writes to f, from its start, the module zip of commit's
// files extracted into a scratch folder.
func zipExtracted(f *os.File, root, commit string, mod module.Version) error {
	dir, err := os.MkdirTemp("", "release-zip-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := modfiles.Extract(root, commit, dir); err != nil {
		return err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	return modzip.CreateFromDir(f, mod, dir)
}
