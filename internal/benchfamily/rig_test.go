//go:build linux

package benchfamily

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path the rigs' paths are relative to.
const module = "github.com/ebpf-zc/ebpf/"

// TestLibraryTestsLinkTheirRigsOnly lists what the test binary of each
// library with benchmarks of a family (ringbuf, perf) links, and fails
// where it links the rig of a family that does not run there: a test of
// perf that links the XDP flood, say, through the knobs' defaults.
func TestLibraryTestsLinkTheirRigsOnly(t *testing.T) {
	needCheckout(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command for go list")
	}
	libraries := map[string][]string{} // package: the rigs it may link
	for _, f := range All() {
		for _, r := range f.Runs {
			if r.Pkg != "./bench/" {
				libraries[r.Pkg] = append(libraries[r.Pkg], f.Rig...)
			}
		}
	}
	if len(libraries) < 2 {
		t.Fatalf("libraries with benchmarks %v: want ringbuf and perf at least", libraries)
	}
	rigs := map[string][]string{} // package: the families whose rig it is
	for _, f := range All() {
		for _, pkg := range f.Rig {
			rigs[pkg] = append(rigs[pkg], f.Name)
		}
	}
	for pkg := range rigs {
		if out, err := exec.Command("go", "list", "-C", "../..", "./"+pkg).CombinedOutput(); err != nil {
			t.Errorf("rig %s (of %s): %v: %s", pkg, rigs[pkg], err, out)
		}
	}
	for lib, own := range libraries {
		t.Run(strings.Trim(lib, "./"), func(t *testing.T) {
			out, err := exec.Command("go", "list", "-C", "../..", "-deps", "-test", lib).Output()
			if err != nil {
				t.Fatalf("go list -deps -test %s: %v", lib, err)
			}
			for dep := range strings.FieldsSeq(string(out)) {
				pkg, ok := strings.CutPrefix(dep, module)
				if !ok || slices.Contains(own, pkg) {
					continue
				}
				if families, isRig := rigs[pkg]; isRig {
					t.Errorf("the test binary of %s links %s, the rig of %s, whose benchmarks do not run there", lib, pkg, strings.Join(families, " and "))
				}
			}
		})
	}
}
