package release

import (
	"archive/zip"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// maxZipBytes bounds the module zip an importer downloads: 1 MB, where
// the zip with the committed benchmark results was 4.1 MB (2.6 MB for
// all of cilium/ebpf v0.22.0).
const maxZipBytes = 1_000_000

// mustHold are paths, or folders ending in "/", the zip must hold: the
// library, a test corpus its tests read, and the docs a user reads.
var mustHold = []string{
	"go.mod", "LICENSE", "README.md", "CHANGELOG.md",
	"ringbuf/reader.go", "perf/reader.go",
	"internal/readers/", "internal/epoll/", "internal/ulong/",
	"perf/testdata/fuzz/",
	"docs/ringbuf.md", "docs/perf.md", "docs/writer.md",
}

// mustLack are folders the zip must leave out: the committed benchmark
// results, plots and A/B data (a module of their own, testdata/go.mod).
var mustLack = []string{"testdata/"}

// TestModuleZip builds the module zip the Go proxy would serve for a
// commit of this checkout, with golang.org/x/mod/zip, the code the go
// command itself uses, and checks its size and contents.
func TestModuleZip(t *testing.T) {
	root, err := modfiles.Root(".")
	if err != nil {
		t.Skipf("not a git checkout, so no commit to zip: %v", err)
	}
	names, err := modfiles.List(root)
	if err != nil {
		t.Fatal(err)
	}
	var files []modzip.File
	for _, name := range names {
		files = append(files, file{root: root, name: name})
	}
	var buf bytes.Buffer
	// The version only names the zip's top folder; any will do.
	mod := module.Version{Path: modfiles.ModulePath, Version: "v0.1.0"}
	if err := modzip.Create(&buf, mod, files); err != nil {
		t.Fatal(err)
	}

	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	prefix := mod.Path + "@" + mod.Version + "/"
	var held []string
	var unpacked uint64
	for _, f := range zr.File {
		held = append(held, strings.TrimPrefix(f.Name, prefix))
		unpacked += f.UncompressedSize64
	}
	t.Logf("module zip: %d bytes, %d files, %d bytes unpacked (bound %d bytes)", buf.Len(), len(held), unpacked, maxZipBytes)
	if buf.Len() > maxZipBytes {
		t.Errorf("the module zip is %d bytes, above the bound of %d; its largest files:\n%s", buf.Len(), maxZipBytes, largest(zr, prefix, 10))
	}
	for _, want := range mustHold {
		if !holds(held, want) {
			t.Errorf("the module zip lacks %s", want)
		}
	}
	for _, unwanted := range mustLack {
		if holds(held, unwanted) {
			t.Errorf("the module zip holds %s: is its go.mod gone?", unwanted)
		}
	}
}

// holds reports whether names has want, or a file under it when want
// ends in "/".
func holds(names []string, want string) bool {
	for _, name := range names {
		if name == want || strings.HasSuffix(want, "/") && strings.HasPrefix(name, want) {
			return true
		}
	}
	return false
}

// largest lists the n largest files of the zip, for a failure to name
// what grew.
func largest(zr *zip.Reader, prefix string, n int) string {
	sorted := slices.Clone(zr.File)
	slices.SortFunc(sorted, func(a, b *zip.File) int {
		return cmp.Compare(b.CompressedSize64, a.CompressedSize64)
	})
	var b strings.Builder
	for _, f := range sorted[:min(n, len(sorted))] {
		fmt.Fprintf(&b, "  %8d  %s\n", f.CompressedSize64, strings.TrimPrefix(f.Name, prefix))
	}
	return b.String()
}

// file is a file of the checkout as x/mod/zip wants it.
type file struct {
	root, name string
}

func (f file) Path() string                 { return f.name }
func (f file) Lstat() (os.FileInfo, error)  { return os.Lstat(f.local()) }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.local()) }
func (f file) local() string                { return filepath.Join(f.root, filepath.FromSlash(f.name)) }
