// Package exampletest runs a package's Example functions and checks what
// they print, for examples that need BPF: go test runs an example with an
// "// Output:" comment everywhere, also where BPF is missing, and such an
// example cannot skip. So, as cilium/ebpf does with its examples that need
// a kernel, they carry no "// Output:" comment; each package's
// TestExampleOutputs lists every example with the output it must print,
// and Run checks that the list leaves none out.
package exampletest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// Example is one Example function and what it must print.
type Example struct {
	Name   string
	Run    func()
	Output string
	// Needs is the result of a check for what the example needs beyond
	// what the whole list does (a newer map type, say): an error that
	// says BPF lacks it (bpftest.Unavailable) skips the example, any
	// other fails it.
	Needs error
}

// Run runs every example with os.Stdout captured, as go test runs an
// example with an "// Output:" comment, and fails for one that prints
// other than its Output, or for an Example function of the package's
// _test.go files (in the working directory) that examples leave out.
func Run(t *testing.T, examples []Example) {
	t.Helper()
	declared, err := declaredExamples(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range declared {
		if !slices.ContainsFunc(examples, func(e Example) bool { return e.Name == name }) {
			t.Errorf("%s is not checked: add it to TestExampleOutputs with the output it must print", name)
		}
	}
	for _, e := range examples {
		t.Run(e.Name, func(t *testing.T) {
			bpftest.SkipIfUnavailable(t, e.Needs, "a feature "+e.Name+" needs")
			if got := output(t, e.Run); got != e.Output {
				t.Errorf("%s printed:\n%s\nwant:\n%s", e.Name, got, e.Output)
			}
		})
	}
}

// declaredExamples returns the names of the Example functions in the
// _test.go files of dir.
func declaredExamples(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names, nil
}

// output runs example with os.Stdout captured and returns what it printed.
func output(t *testing.T, example func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	t.Cleanup(func() { os.Stdout = stdout })
	printed := make(chan string)
	go func() {
		var b strings.Builder
		io.Copy(&b, r)
		r.Close()
		printed <- b.String()
	}()
	example()
	os.Stdout = stdout
	w.Close()
	return <-printed
}
