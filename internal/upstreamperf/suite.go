// Package upstreamperf runs cilium/ebpf's own perf reader tests against
// this module's perf package, without copying them into the repository:
// at test time it copies perf/reader_test.go from the module cache into a
// scratch module, with its imports of cilium/ebpf's internal packages and
// of go-quicktest pointed at small stand-ins written here, and aliases
// that make our package answer to upstream's names.
//
// Upstream's file is an internal test of package perf; the tests that call
// unexported functions (TestCreatePerfEvent, TestReadRecord) are dropped,
// and the one unexported error it checks, errMustBePaused, is our
// ErrMustBePaused. Everything else runs as upstream wrote it.
package upstreamperf

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ScratchModule is the scratch module's path.
const ScratchModule = "upstreamperfsuite"

// Dropped are upstream's tests that call unexported functions of its
// package, which ours does not have.
var Dropped = []string{"TestCreatePerfEvent", "TestReadRecord"}

// importMap points upstream's imports at the stand-ins.
var importMap = map[string]string{
	"github.com/cilium/ebpf/internal":                    ScratchModule + "/shim/ebpfinternal",
	"github.com/cilium/ebpf/internal/testutils":          ScratchModule + "/shim/testutils",
	"github.com/cilium/ebpf/internal/testutils/testmain": ScratchModule + "/shim/testmain",
	"github.com/go-quicktest/qt":                         ScratchModule + "/shim/qt",
}

// Prepare writes the scratch module to dir: go.mod requiring our module
// at repo and cilium/ebpf at version, our go.sum, upstream's test file
// (from upstreamDir, cilium/ebpf's module directory) rewritten, the
// aliases and the stand-ins.
func Prepare(dir, repo, upstreamDir, version string) error {
	src, err := os.ReadFile(filepath.Join(upstreamDir, "perf", "reader_test.go"))
	if err != nil {
		return err
	}
	test, err := rewrite(src)
	if err != nil {
		return fmt.Errorf("rewrite upstream's perf/reader_test.go: %w", err)
	}
	sums, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		return err
	}
	goMod := fmt.Sprintf(`module %s

go 1.26.8

require (
	github.com/cilium/ebpf %s
	github.com/ebpf-zc/ebpf v0.0.0
)

replace github.com/ebpf-zc/ebpf => %s
`, ScratchModule, version, strconv.Quote(repo))
	files := map[string][]byte{
		"go.mod":                        []byte(goMod),
		"go.sum":                        sums,
		"perf/reader_test.go":           test,
		"perf/aliases_test.go":          []byte(aliases),
		"shim/ebpfinternal/internal.go": []byte(shimInternal),
		"shim/testutils/testutils.go":   []byte(shimTestutils),
		"shim/testmain/testmain.go":     []byte(shimTestmain),
		"shim/qt/qt.go":                 []byte(shimQt),
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// rewrite points the imports of upstream's test file at the stand-ins
// and drops the tests in Dropped.
func rewrite(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "reader_test.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if to, ok := importMap[path]; ok {
			if imp.Name == nil && path == "github.com/cilium/ebpf/internal" {
				imp.Name = ast.NewIdent("internal")
			}
			imp.Path.Value = strconv.Quote(to)
		}
	}
	dropped := 0
	f.Decls = slices.DeleteFunc(f.Decls, func(d ast.Decl) bool {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Recv == nil && slices.Contains(Dropped, fn.Name.Name) {
			dropped++
			return true
		}
		return false
	})
	if dropped != len(Dropped) {
		return nil, fmt.Errorf("found %d of the tests to drop, %v", dropped, Dropped)
	}
	dropUnusedImports(f)
	// Comments of dropped functions would float; the printer keeps the
	// rest in place.
	f.Comments = slices.DeleteFunc(f.Comments, func(c *ast.CommentGroup) bool {
		for _, d := range f.Decls {
			if c.Pos() >= d.Pos() && c.End() <= d.End() {
				return false
			}
		}
		return c.Pos() > f.Name.End()
	})
	var out bytes.Buffer
	if err := format.Node(&out, fset, f); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// dropUnusedImports removes the imports only the dropped tests used.
func dropUnusedImports(f *ast.File) {
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	name := func(imp *ast.ImportSpec) string {
		if imp.Name != nil {
			return imp.Name.Name
		}
		path, _ := strconv.Unquote(imp.Path.Value)
		return filepath.Base(path)
	}
	for _, d := range f.Decls {
		if gen, ok := d.(*ast.GenDecl); ok && gen.Tok == token.IMPORT {
			gen.Specs = slices.DeleteFunc(gen.Specs, func(s ast.Spec) bool {
				imp := s.(*ast.ImportSpec)
				return !used[name(imp)] && imp.Name == nil
			})
		}
	}
	f.Imports = slices.DeleteFunc(f.Imports, func(imp *ast.ImportSpec) bool {
		return !used[name(imp)] && imp.Name == nil
	})
}

// aliases make our package answer to the names upstream's tests use.
const aliases = `package perf

import ours "github.com/ebpf-zc/ebpf/perf"

type (
	Reader        = ours.Reader
	Record        = ours.Record
	ReaderOptions = ours.ReaderOptions
)

var (
	NewReader            = ours.NewReader
	NewReaderWithOptions = ours.NewReaderWithOptions
	IsUnknownEvent       = ours.IsUnknownEvent
	ErrClosed            = ours.ErrClosed
	ErrFlushed           = ours.ErrFlushed
	errMustBePaused      = ours.ErrMustBePaused
)
`

// shimInternal stands in for the names upstream's test takes from
// cilium/ebpf/internal.
const shimInternal = `// Package internal stands in for cilium/ebpf/internal in upstream's perf tests.
package internal

import "encoding/binary"

// EmptyBPFContext is a test run's input: 15 zero bytes.
var EmptyBPFContext = make([]byte, 15)

// NativeEndian is the host's byte order.
var NativeEndian = binary.NativeEndian

// Align rounds n up to a multiple of alignment, a power of two.
func Align[I ~int | ~int64 | ~uint32 | ~uint64](n, alignment I) I {
	return (n + alignment - 1) &^ (alignment - 1)
}
`

// shimTestutils stands in for cilium/ebpf/internal/testutils.
const shimTestutils = `// Package testutils stands in for cilium/ebpf/internal/testutils in upstream's perf tests.
package testutils

import (
	"errors"
	"runtime"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// SkipIfNotSupported skips where err says the kernel lacks a feature.
func SkipIfNotSupported(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ebpf.ErrNotSupported) {
		tb.Skip(err)
	}
}

// SkipOnOldKernel does nothing: every kernel this module supports (5.8
// and later) is newer than the versions upstream's perf tests name.
func SkipOnOldKernel(tb testing.TB, minVersion, feature string) {}

// LockOSThreadToSingleCPU keeps the test on CPU 0 until it ends.
func LockOSThreadToSingleCPU(tb testing.TB) {
	tb.Helper()
	runtime.LockOSThread()
	var before, cpu0 unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		tb.Fatal(err)
	}
	cpu0.Set(0)
	if err := unix.SchedSetaffinity(0, &cpu0); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		unix.SchedSetaffinity(0, &before)
		runtime.UnlockOSThread()
	})
}
`

// shimTestmain stands in for cilium/ebpf/internal/testutils/testmain.
const shimTestmain = `// Package testmain stands in for cilium/ebpf's testmain in upstream's perf tests.
package testmain

import (
	"os"
	"testing"
)

// Run runs the tests.
func Run(m *testing.M) { os.Exit(m.Run()) }
`

// shimQt stands in for the few checkers of go-quicktest/qt upstream's
// perf tests use, so the run needs nothing outside the module cache.
const shimQt = `// Package qt stands in for the go-quicktest/qt checkers upstream's perf tests use.
package qt

import (
	"errors"
	"fmt"
	"testing"
)

// Checker checks a condition and describes a failure.
type Checker interface {
	Check() (ok bool, failure string)
}

type check struct {
	ok      bool
	failure string
}

func (c check) Check() (bool, string) { return c.ok, c.failure }

// Comment is a note printed with a failure.
type Comment string

// Commentf formats a Comment.
func Commentf(format string, args ...any) Comment { return Comment(fmt.Sprintf(format, args...)) }

// Assert fails tb at once unless c holds.
func Assert(tb testing.TB, c Checker, comments ...Comment) {
	tb.Helper()
	if ok, failure := c.Check(); !ok {
		tb.Fatal(failure, comments)
	}
}

// Equals checks got == want.
func Equals[T comparable](got, want T) Checker {
	return check{got == want, fmt.Sprintf("got %v, want %v", got, want)}
}

// IsTrue checks b.
func IsTrue(b bool) Checker { return check{b, "got false, want true"} }

// IsNil checks that v is nil.
func IsNil(v any) Checker { return check{v == nil, fmt.Sprintf("got %v, want nil", v)} }

// ErrorIs checks errors.Is(err, target).
func ErrorIs(err, target error) Checker {
	return check{errors.Is(err, target), fmt.Sprintf("error %v is not %v", err, target)}
}

// Not inverts c.
func Not(c Checker) Checker {
	ok, failure := c.Check()
	return check{!ok, "unexpected success: not " + failure}
}
`
