package exampletest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
)

func TestDeclaredExamples(t *testing.T) {
	dir := t.TempDir()
	src := `package p_test

func Example() {}
func ExampleReader_Read() {}
func (x T) ExampleMethod() {}
func helper() {}
`
	if err := os.WriteFile(filepath.Join(dir, "example_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.go"), []byte("package p\n\nfunc ExampleNotATest() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := declaredExamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Example", "ExampleReader_Read"}; !slices.Equal(got, want) {
		t.Fatalf("declared examples %q, want %q", got, want)
	}
}

func TestOutput(t *testing.T) {
	if got := output(t, func() { os.Stdout.WriteString("printed\n") }); got != "printed\n" {
		t.Fatalf("captured %q", got)
	}
}

func TestNeedsSkips(t *testing.T) {
	ran := false
	Run(t, []Example{{
		Name:  "ExampleMissing",
		Run:   func() { ran = true },
		Needs: fmt.Errorf("no such map type: %w", ebpf.ErrNotSupported),
	}})
	if ran {
		t.Fatal("an example whose needs are missing ran")
	}
}
