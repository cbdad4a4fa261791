package vmtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchmarkFunc(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{"func BenchmarkRead(b *testing.B) {", true},
		{"func Benchmark(b *testing.B) {", true},
		{"func Benchmark_x(b *testing.B) {", true},
		{"func Benchmarked(b *testing.B) {", false}, // go test ignores it
		{"func BenchmarkRead(t *testing.T) {", false},
		{"// func BenchmarkRead(b *testing.B) {", false},
		{"func benchmarkRead(b *testing.B) {", false},
	} {
		if got := benchmarkFunc.MatchString(tt.src); got != tt.want {
			t.Errorf("%q: match %v, want %v", tt.src, got, tt.want)
		}
	}
}

func TestParseGoList(t *testing.T) {
	mod := t.TempDir()
	for name, src := range map[string]string{
		"a/a_test.go": "package a\nfunc BenchmarkA(b *testing.B) {}\n",
		"b/b_test.go": "package b\nfunc TestB(t *testing.T) {}\n",
	} {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	module := `"Module": {"Path": "m", "Dir": "` + mod + `"}`
	out := `{"ImportPath": "m", "Dir": "` + mod + `", ` + module + `}
{"ImportPath": "m/a", "Dir": "` + mod + `/a", "XTestGoFiles": ["a_test.go"], ` + module + `}
{"ImportPath": "m/b", "Dir": "` + mod + `/b", "TestGoFiles": ["b_test.go"], ` + module + `}
{"ImportPath": "m/broken", "Dir": "` + mod + `/broken", "Error": {"Err": "syntax error"}, ` + module + `}
`
	pkgs, err := parseGoList(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pkgs {
		got = append(got, p.Rel+"|"+p.Name()+"|"+boolWord(p.HasBenchmarks)+"|"+p.LoadError)
	}
	want := "a|a|bench||b|b|-||broken|broken|-|syntax error"
	if strings.Join(got, "|") != want {
		t.Errorf("packages = %s, want %s", strings.Join(got, "|"), want)
	}
	if _, err := parseGoList(strings.NewReader("{not json")); err == nil {
		t.Error("no error for broken go list output")
	}
}

func boolWord(b bool) string {
	if b {
		return "bench"
	}
	return "-"
}

func TestTestPackageName(t *testing.T) {
	if got := (TestPackage{ImportPath: "github.com/ebpf-zc/ebpf", Rel: "."}).Name(); got != "ebpf" {
		t.Errorf("root package name %q", got)
	}
}
