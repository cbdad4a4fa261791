// Package upstreamsuite runs cilium/ebpf's own reader tests against this
// module's ringbuf and perf packages, without copying them into the
// repository: at test time it copies upstream's test files from the module
// cache into a scratch module, with their imports of cilium/ebpf's
// internal packages and of go-quicktest and go-cmp pointed at small
// stand-ins written here, and aliases that make our packages answer to
// upstream's names.
//
// Upstream's files are internal tests of their packages; the tests that
// call unexported functions are dropped (each Suite's Dropped), the few
// unexported names they read are aliased to ours (errMustBePaused is our
// ErrMustBePaused, ringbufHeaderSize the kernel's 8). Everything else runs
// as upstream wrote it.
package upstreamsuite

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
const ScratchModule = "upstreamsuite"

// Suite is one package's upstream tests.
type Suite struct {
	// Package is the package directory, in upstream's module and ours.
	Package string
	// Files are upstream's test files the suite copies.
	Files []string
	// Dropped are upstream's tests that call unexported functions of its
	// package, which ours does not have.
	Dropped []string
	// aliases is the file that makes our package answer to upstream's
	// names.
	aliases string
}

// Suites are the packages whose upstream tests run against ours.
var Suites = []Suite{
	{
		Package: "perf",
		Files:   []string{"reader_test.go"},
		Dropped: []string{"TestCreatePerfEvent", "TestReadRecord"},
		aliases: perfAliases,
	},
	{
		Package: "ringbuf",
		// helper_windows_test.go is for eBPF for Windows, which no test
		// here reaches.
		Files:   []string{"reader_test.go", "helper_test.go", "helper_other_test.go"},
		aliases: ringbufAliases,
	},
}

// importMap points upstream's imports at the stand-ins.
var importMap = map[string]string{
	"github.com/cilium/ebpf/internal":                    ScratchModule + "/shim/ebpfinternal",
	"github.com/cilium/ebpf/internal/platform":           ScratchModule + "/shim/platform",
	"github.com/cilium/ebpf/internal/sys":                ScratchModule + "/shim/sys",
	"github.com/cilium/ebpf/internal/testutils":          ScratchModule + "/shim/testutils",
	"github.com/cilium/ebpf/internal/testutils/testmain": ScratchModule + "/shim/testmain",
	"github.com/go-quicktest/qt":                         ScratchModule + "/shim/qt",
	"github.com/google/go-cmp/cmp":                       ScratchModule + "/shim/cmp",
}

// Prepare writes the scratch module to dir: go.mod requiring our module
// at repo and cilium/ebpf at version, our go.sum, every suite's upstream
// test files (from upstreamDir, cilium/ebpf's module directory)
// rewritten, the aliases and the stand-ins.
func Prepare(dir, repo, upstreamDir, version string) error {
	sums, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		return err
	}
	goMod := fmt.Sprintf(`module %s

go 1.25.0

require (
	github.com/cilium/ebpf %s
	github.com/ebpf-zc/ebpf v0.0.0
)

replace github.com/ebpf-zc/ebpf => %s
`, ScratchModule, version, strconv.Quote(repo))
	files := map[string][]byte{
		"go.mod":                        []byte(goMod),
		"go.sum":                        sums,
		"shim/ebpfinternal/internal.go": []byte(shimInternal),
		"shim/platform/platform.go":     []byte(shimPlatform),
		"shim/sys/sys.go":               []byte(shimSys),
		"shim/testutils/testutils.go":   []byte(shimTestutils),
		"shim/testmain/testmain.go":     []byte(shimTestmain),
		"shim/qt/qt.go":                 []byte(shimQt),
		"shim/cmp/cmp.go":               []byte(shimCmp),
	}
	for _, s := range Suites {
		dropped := 0
		for _, name := range s.Files {
			src, err := os.ReadFile(filepath.Join(upstreamDir, s.Package, name))
			if err != nil {
				return err
			}
			test, n, err := rewrite(name, src, s.Dropped)
			if err != nil {
				return fmt.Errorf("rewrite upstream's %s/%s: %w", s.Package, name, err)
			}
			dropped += n
			files[filepath.Join(s.Package, name)] = test
		}
		if dropped != len(s.Dropped) {
			return fmt.Errorf("%s: found %d of the tests to drop, %v", s.Package, dropped, s.Dropped)
		}
		files[filepath.Join(s.Package, "aliases_test.go")] = []byte(s.aliases)
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
// and drops the tests named in drop; it says how many it dropped.
func rewrite(name string, src []byte, drop []string) ([]byte, int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, 0, err
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
		if ok && fn.Recv == nil && slices.Contains(drop, fn.Name.Name) {
			dropped++
			return true
		}
		return false
	})
	if dropped > 0 {
		dropUnusedImports(f)
		// Comments of dropped functions would float; the printer keeps
		// the rest in place.
		f.Comments = slices.DeleteFunc(f.Comments, func(c *ast.CommentGroup) bool {
			for _, d := range f.Decls {
				if c.Pos() >= d.Pos() && c.End() <= d.End() {
					return false
				}
			}
			return c.Pos() > f.Name.End()
		})
	}
	var out bytes.Buffer
	if err := format.Node(&out, fset, f); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), dropped, nil
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

// perfAliases make our perf package answer to the names upstream's tests use.
const perfAliases = `package perf

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

// ringbufAliases make our ringbuf package answer to the names upstream's
// tests use; ringbufHeaderSize is the size of a record's header in the
// kernel's layout (include/uapi/linux/bpf.h, BPF_RINGBUF_HDR_SZ).
const ringbufAliases = `package ringbuf

import ours "github.com/ebpf-zc/ebpf/ringbuf"

type (
	Reader = ours.Reader
	Record = ours.Record
)

var (
	NewReader  = ours.NewReader
	ErrClosed  = ours.ErrClosed
	ErrFlushed = ours.ErrFlushed
)

const ringbufHeaderSize = 8
`

// shimInternal stands in for the names upstream's test takes from
// cilium/ebpf/internal.
const shimInternal = `// Package internal stands in for cilium/ebpf/internal in upstream's tests.
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

// shimPlatform stands in for cilium/ebpf/internal/platform: these tests
// run on Linux.
const shimPlatform = `// Package platform stands in for cilium/ebpf/internal/platform in upstream's tests.
package platform

// IsWindows is false: the suites run on Linux.
const IsWindows = false
`

// shimSys stands in for the names upstream's tests take from
// cilium/ebpf/internal/sys.
const shimSys = `// Package sys stands in for cilium/ebpf/internal/sys in upstream's tests.
package sys

// BPF_RB_NO_WAKEUP is bpf_ringbuf_submit's flag for no wakeup
// (include/uapi/linux/bpf.h).
const BPF_RB_NO_WAKEUP = 1
`

// shimTestutils stands in for cilium/ebpf/internal/testutils.
const shimTestutils = `// Package testutils stands in for cilium/ebpf/internal/testutils in upstream's tests.
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
// and later) is newer than the versions upstream's tests name.
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
const shimTestmain = `// Package testmain stands in for cilium/ebpf's testmain in upstream's tests.
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
const shimQt = `// Package qt stands in for the go-quicktest/qt checkers upstream's tests use.
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

// shimCmp stands in for the one function of go-cmp upstream's ringbuf
// tests use.
const shimCmp = `// Package cmp stands in for github.com/google/go-cmp/cmp in upstream's tests.
package cmp

import (
	"fmt"
	"reflect"
)

// Diff returns "" if x and y are deeply equal, else both.
func Diff(x, y any) string {
	if reflect.DeepEqual(x, y) {
		return ""
	}
	return fmt.Sprintf("-%v\n+%v", x, y)
}
`
