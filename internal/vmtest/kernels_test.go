package vmtest

import (
	"strings"
	"testing"
)

func kernelNamesOf(t *testing.T, ks []Kernel) string {
	t.Helper()
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return strings.Join(names, " ")
}

func TestSelectKernels(t *testing.T) {
	matrix := []Kernel{{Name: "5.10"}, {Name: "6.1"}, {Name: "6.12"}, {Name: "7.x"}}
	for _, tt := range []struct {
		spec, want, err string
	}{
		{spec: "", want: "5.10 6.1 6.12 7.x"},
		{spec: "all", want: "5.10 6.1 6.12 7.x"},
		{spec: "5.10 6.1", want: "5.10 6.1"},
		{spec: "6.1,5.10", want: "5.10 6.1"}, // matrix order, whatever the order asked
		{spec: " 6.12\t6.12 ", want: "6.12"},
		{spec: "quick", want: "5.10 7.x"},
		{spec: "oldest", want: "5.10"},
		{spec: "newest", want: "7.x"},
		{spec: "7", want: "7.x"},
		{spec: "quick 6.1", want: "5.10 6.1 7.x"},
		{spec: "4.19", err: `unknown kernel "4.19"`},
		{spec: "6", err: `unknown kernel "6"`},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := SelectKernels(matrix, tt.spec)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("SelectKernels(%q) error = %v, want one containing %q", tt.spec, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := kernelNamesOf(t, got); s != tt.want {
				t.Errorf("SelectKernels(%q) = %q, want %q", tt.spec, s, tt.want)
			}
		})
	}
}

func TestSelectKernelsEmptyMatrix(t *testing.T) {
	if _, err := SelectKernels(nil, "all"); err == nil {
		t.Fatal("no error for an empty matrix")
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"5.10", "6.1", -1},
		{"6.1", "5.10", 1},
		{"6.1", "6.12", -1},
		{"6.12", "6.12", 0},
		{"6.12", "7.x", -1},
		{"7.x", "7.3", 1},
		{"7.3", "7.3.4", -1},
		{"5.10.262", "5.10.9", 1},
	} {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// The quick set and the e2e test take the first and last entries as the
// oldest and newest kernels, so the matrix must stay sorted.
func TestMatrixSorted(t *testing.T) {
	for i := 1; i < len(Matrix); i++ {
		if CompareVersions(Matrix[i-1].Name, Matrix[i].Name) >= 0 {
			t.Errorf("Matrix not sorted: %s before %s", Matrix[i-1].Name, Matrix[i].Name)
		}
	}
	for _, k := range Matrix {
		if len(k.Suites) == 0 {
			t.Errorf("kernel %s has no suites", k.Name)
		}
		for _, s := range k.Suites {
			if s.Archive != "debian" && s.Archive != "debian-security" {
				t.Errorf("kernel %s: suite %s in unknown archive %q", k.Name, s.Name, s.Archive)
			}
		}
	}
}
