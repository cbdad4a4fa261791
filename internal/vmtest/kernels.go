package vmtest

import (
	"fmt"
	"strconv"
	"strings"
)

// Suite is one Debian archive suite a kernel is fetched from.
type Suite struct {
	// Archive is the archive's folder on the mirror: "debian" or
	// "debian-security".
	Archive string
	// Name is the suite, such as "bookworm" or "trixie-backports".
	Name string
}

// Kernel is one entry of the matrix: a kernel line and where Debian ships
// it. The exact package is not written down here: it is resolved through
// the meta package at fetch time, so the matrix follows Debian's ABI bumps
// without edits.
type Kernel struct {
	// Name is what KERNELS= selects and what results are filed under.
	Name string
	// Suites are the suites searched together. When more than one offers
	// the meta package, the highest version wins (see apt.go).
	Suites []Suite
	// CPUs is the guest's CPU count; 0 is one (see VM.Args).
	CPUs int
}

// MetaPackage is the meta package whose dependency names the current
// kernel image. The cloud flavour boots fastest and has BPF, BTF and the
// 8250 serial console built in (Debian's config-*-cloud-amd64:
// CONFIG_BPF_SYSCALL=y, CONFIG_DEBUG_INFO_BTF=y, CONFIG_SERIAL_8250_CONSOLE=y).
const MetaPackage = "linux-image-cloud-amd64"

// Matrix is every kernel `make test-vms` knows, oldest first. To add a
// kernel, add an entry with the suites that carry it; see docs/kernels.md.
var Matrix = []Kernel{
	{Name: "5.10", Suites: []Suite{{"debian-security", "bullseye-security"}}},
	{Name: "6.1", Suites: []Suite{{"debian", "bookworm"}, {"debian-security", "bookworm-security"}}},
	{Name: "6.12", Suites: []Suite{{"debian", "trixie"}, {"debian-security", "trixie-security"}}},
	// Backports often runs ahead of sid for the kernel (7.3 vs 7.2 when
	// this was written); listing both picks whichever is newer.
	// Two CPUs: the overwrite-mode ring (7.x only) is tested with a
	// producer on each, as its torn-copy path needs.
	{Name: "7.x", Suites: []Suite{{"debian", "trixie-backports"}, {"debian", "sid"}}, CPUs: 2},
}

// Selector words that stand for a set of kernels rather than one.
const (
	// SelectAll is every kernel of the matrix.
	SelectAll = "all"
	// SelectQuick is the oldest and the newest kernel.
	SelectQuick = "quick"
	// SelectOldest is the first kernel of the matrix.
	SelectOldest = "oldest"
	// SelectNewest is the last kernel of the matrix.
	SelectNewest = "newest"
)

// SelectKernels picks kernels from matrix by a KERNELS= value: kernel
// names and the words all, quick (oldest and newest), oldest and newest,
// separated by spaces or commas. An empty value means all. The result
// keeps the matrix order and has no duplicates.
func SelectKernels(matrix []Kernel, spec string) ([]Kernel, error) {
	if len(matrix) == 0 {
		return nil, fmt.Errorf("no kernels in the matrix")
	}
	words := strings.FieldsFunc(spec, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	if len(words) == 0 {
		words = []string{SelectAll}
	}
	pick := make([]bool, len(matrix))
	for _, w := range words {
		switch w {
		case SelectAll:
			for i := range pick {
				pick[i] = true
			}
		case SelectQuick:
			pick[0], pick[len(pick)-1] = true, true
		case SelectOldest:
			pick[0] = true
		case SelectNewest:
			pick[len(pick)-1] = true
		default:
			i := indexKernel(matrix, w)
			if i < 0 {
				return nil, fmt.Errorf("unknown kernel %q: choose from %s, or all, quick, oldest, newest", w, kernelNames(matrix))
			}
			pick[i] = true
		}
	}
	var out []Kernel
	for i, k := range matrix {
		if pick[i] {
			out = append(out, k)
		}
	}
	return out, nil
}

// indexKernel finds a kernel by name. "7" also finds "7.x", so a major
// version alone is enough for the entry that tracks the newest release.
func indexKernel(matrix []Kernel, name string) int {
	for i, k := range matrix {
		if k.Name == name || k.Name == name+".x" {
			return i
		}
	}
	return -1
}

func kernelNames(matrix []Kernel) string {
	names := make([]string, len(matrix))
	for i, k := range matrix {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// CompareVersions orders kernel versions such as "5.10", "6.12.117" or
// "7.x" by their numeric parts; a non-numeric part ("x") sorts after every
// number, since such an entry tracks the newest release of its line.
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		if i >= len(pa) {
			return -1
		}
		if i >= len(pb) {
			return 1
		}
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		switch {
		case ea != nil && eb != nil:
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
		case ea != nil:
			return 1
		case eb != nil:
			return -1
		case na != nb:
			if na < nb {
				return -1
			}
			return 1
		}
	}
	return 0
}
