//go:build linux

package upstreambench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// fakeCilium is the fake cilium/ebpf module under testdata.
func fakeCilium(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "fakecilium"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDetectAPI(t *testing.T) {
	api, err := DetectAPI(fakeCilium(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"NewReader", true},
		{"Reader", true},
		{"Reader.ReadInto", true},
		{"Record.RawSample", true},
		{"RawReader.WithLease", true},
		{"Lease.ReadSample", true},
		{"Lease.Commit", true},
		{"Record.cpu", false},           // unexported field
		{"Reader.readLocked", false},    // unexported method
		{"ring", false},                 // unexported type
		{"WindowsOnly", false},          // another GOOS
		{"ExportedInTest", false},       // a test file
		{"Reader.Peek", false},          // not there at all
		{"RawReader.ReadSample", false}, // a method of another type
	} {
		if api[tc.name] != tc.want {
			t.Errorf("detected %s: %v, want %v (all: %v)", tc.name, api[tc.name], tc.want, api.Names())
		}
	}
}

func TestDetectAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
	}{
		{"no ringbuf package", filepath.Join("testdata", "othermodule")},
		{"no such directory", filepath.Join("testdata", "nonexistent")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if api, err := DetectAPI(tc.dir); err == nil {
				t.Fatalf("DetectAPI(%s) = %v, want an error", tc.dir, api.Names())
			}
		})
	}
}

func TestReceiverType(t *testing.T) {
	for src, want := range map[string]string{
		"func (r *Reader) M()":    "Reader",
		"func (r Reader) M()":     "Reader",
		"func (r *Ring[T]) M()":   "Ring",
		"func (r Ring[K, V]) M()": "Ring",
	} {
		if got := receiverOf(t, src); got != want {
			t.Errorf("receiver of %q = %q, want %q", src, got, want)
		}
	}
}

// receiverOf parses one method declaration and names its receiver type.
func receiverOf(t *testing.T, decl string) string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "m.go", "package p\n"+decl+" {}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	fn := file.Decls[0].(*ast.FuncDecl)
	return receiverType(fn.Recv.List[0].Type)
}
