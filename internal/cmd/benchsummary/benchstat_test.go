//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

// csvSample is benchstat -format csv output of two touch tables, cut down.
const csvSample = `kernel: 6.18
cpu: AMD EPYC
/touch: head
,upstream,,copy,,,,records,,,
,Mrec/s,CI,Mrec/s,CI,vs base,P,Mrec/s,CI,vs base,P
16,62.23,1%,67.16,2%,+7.93%,p=0.000 n=10,135.45,2%,+117.66%,p=0.000 n=10
4096,4.936,35%,4.4055,3%,~,p=0.353 n=10,41.24,13%,+735.60%,p=0.000 n=10
geomean,17.5,,17.2,,-1.85%,,74.7,,+326.47%,

/touch: all
,upstream,,copy,,,
,Mrec/s,CI,Mrec/s,CI,vs base,P
16,57.35,16%,58.42,4%,-25.00%,p=0.009 n=10
geomean,13.0,,13.8,,+5.85%,
`

func TestParseCSV(t *testing.T) {
	cells, rows, err := parseCSV([]byte(csvSample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table, row, col, want string
	}{
		{"/touch: head", "16", "copy", "1.08x"},
		{"/touch: head", "4096", "copy", "~"},
		{"/touch: head", "4096", "records", "8.36x"},
		{"/touch: all", "16", "copy", "0.75x"},
	} {
		c, ok := cells[cellKey{table: tc.table, unit: "Mrec/s", row: tc.row, col: tc.col}]
		if !ok {
			t.Errorf("%s %s %s: missing", tc.table, tc.row, tc.col)
			continue
		}
		if got := c.String(); got != tc.want {
			t.Errorf("%s %s %s = %s, want %s", tc.table, tc.row, tc.col, got, tc.want)
		}
	}
	if len(rows) != 3 {
		t.Errorf("rows %v, want 3 (geomean left out)", rows)
	}
	if _, ok := cells[cellKey{table: "/touch: head", unit: "Mrec/s", row: "geomean", col: "copy"}]; ok {
		t.Error("geomean read as a row")
	}
}

func TestScanValues(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.txt")
	data := "cpu: x\n" +
		"BenchmarkRead/size=16/mode=upstream/touch=head-2   \t 10\t 5 ns/op\n" +
		"BenchmarkRead/size=16/mode=batch/touch=head-2   \t 10\t 5 ns/op\n" +
		"BenchmarkK2U/transport=queue/reader=batch-lookup-delete/size=80/rate=max \t 1\t 5 ns/op\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := scanValues(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v["Read"]["mode"], " "); got != "upstream batch" {
		t.Errorf("modes %q", got)
	}
	if got := strings.Join(v["Read"]["touch"], " "); got != "head" {
		t.Errorf("touch %q: GOMAXPROCS suffix kept", got)
	}
	if got := strings.Join(v["K2U"]["rate"], " "); got != "max" {
		t.Errorf("rate %q", got)
	}
	if got := strings.Join(v["K2U"]["reader"], " "); got != "batch-lookup-delete" {
		t.Errorf("reader %q", got)
	}
}

// TestSummaryFits runs the summary of the committed reference run and
// checks that every line fits 80 columns and that a mode the results add
// (batch) gets its columns.
func TestSummaryFits(t *testing.T) {
	benchstat := benchstatCommand(t)
	ref, err := os.ReadFile("../../../testdata/ringbuf/read.txt")
	if err != nil {
		t.Fatal(err)
	}
	// A batch mode: the records rows renamed, so benchstat has data.
	var batch []string
	for line := range strings.Lines(string(ref)) {
		if strings.Contains(line, "/mode=records/") {
			batch = append(batch, strings.Replace(line, "/mode=records/", "/mode=batch/", 1))
		}
	}
	file := filepath.Join(t.TempDir(), "read.txt")
	if err := os.WriteFile(file, append(ref, strings.Join(batch, "")...), 0o644); err != nil {
		t.Fatal(err)
	}
	values, err := scanValues(file)
	if err != nil {
		t.Fatal(err)
	}
	ringbuf, err := benchfamily.Named("ringbuf")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, s := range familySections(ringbuf, values) {
		if err := s.render(&out, benchstat, file); err != nil {
			t.Fatal(err)
		}
	}
	for line := range strings.Lines(out.String()) {
		if n := len([]rune(strings.TrimRight(line, "\n"))); n > width {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	for _, want := range []string{"batch", "/libbpf", "/floor"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary has no %q:\n%s", want, out.String())
		}
	}
}

// TestEveryKindFits summarizes each family's committed reference run
// (its description's Reference) and bench-upstream's with their kinds,
// and checks that every line fits 80 columns, the legend above the
// sections too.
func TestEveryKindFits(t *testing.T) {
	if n := len([]rune(legend)); n > width {
		t.Errorf("the legend has %d columns: %q", n, legend)
	}
	benchstat := benchstatCommand(t)
	files := map[string]string{"upstream": "upstream"}
	for _, f := range benchfamily.All() {
		if f.Reference != "" {
			files[f.Name] = f.Reference
		}
	}
	for kind, file := range files {
		t.Run(kind, func(t *testing.T) {
			var sections []*section
			path, err := filepath.Abs(filepath.Join("../../../testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			if kind == "upstream" {
				var err error
				sections, err = upstreamSections(filepath.Join(path, "base.txt"), filepath.Join(path, "head.txt"))
				if err != nil {
					t.Fatal(err)
				}
			} else {
				values, err := scanValues(path)
				if err != nil {
					t.Fatal(err)
				}
				family, err := benchfamily.Named(kind)
				if err != nil {
					t.Fatal(err)
				}
				sections = familySections(family, values)
			}
			if len(sections) == 0 {
				t.Fatalf("no section in the summary of %s", file)
			}
			var out strings.Builder
			for _, s := range sections {
				if err := s.render(&out, benchstat, path); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Contains(out.String(), "no results to compare") {
				t.Errorf("a section found nothing:\n%s", out.String())
			}
			for line := range strings.Lines(out.String()) {
				if n := len([]rune(strings.TrimRight(line, "\n"))); n > width {
					t.Errorf("%d columns: %q", n, line)
				}
			}
		})
	}
}

// benchstatCommand is benchstat as the tools module (internal/tools) names
// it: go run in that module's directory, so the files it reads must be
// named by absolute paths.
func benchstatCommand(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go for go tool benchstat")
	}
	tools, err := filepath.Abs("../../tools")
	if err != nil {
		t.Fatal(err)
	}
	return []string{"go", "-C", tools, "tool", "benchstat"}
}

// TestSweepFindsTheHole summarizes the Zen 4 guest's medians at every
// 16th size to 512 B (testdata/zen4-sweep-head.txt) with the sweep
// family's section: it must name the fall of Records at 160 B, where its
// stream loads stop, Batches' worst size (a dip at 112 B), the step both
// take at 160 B, and fit 80 columns.
func TestSweepFindsTheHole(t *testing.T) {
	benchstat := benchstatCommand(t)
	file, err := filepath.Abs("testdata/zen4-sweep-head.txt")
	if err != nil {
		t.Fatal(err)
	}
	values, err := scanValues(file)
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := benchfamily.Named("sweep")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, s := range familySections(sweep, values) {
		if err := s.render(&out, benchstat, file); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{
		"records    0.90x 320 B   4/32      0.68x 320 B   10/32",
		"batch      0.82x 112 B   3/32      0.75x 112 B   8/32",
		"records -20% from 144 to 160 B (12.7 -> 10.1 GB/s)",
		"batch   -62% from 96 to 112 B (14.2 -> 5.5 GB/s)",
		"records -15% from 144 to 160 B (12.7 -> 10.8 GB/s)",
		"batch   -30% from 144 to 160 B (16.2 -> 11.4 GB/s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	for line := range strings.Lines(out.String()) {
		if n := len([]rune(strings.TrimRight(line, "\n"))); n > width {
			t.Errorf("%d columns: %q", n, line)
		}
	}
}

// TestParseCenters reads every column's median, the base's too.
func TestParseCenters(t *testing.T) {
	centers, tables, err := parseCenters([]byte(csvSample))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/touch: head", "/touch: all"}; !slices.Equal(tables, want) {
		t.Errorf("tables %q, want %q", tables, want)
	}
	for k, want := range map[cellKey]float64{
		{table: "/touch: head", unit: "Mrec/s", row: "16", col: "upstream"}:  62.23,
		{table: "/touch: head", unit: "Mrec/s", row: "4096", col: "records"}: 41.24,
		{table: "/touch: all", unit: "Mrec/s", row: "16", col: "copy"}:       58.42,
	} {
		if got, ok := centers[k]; !ok || got != want {
			t.Errorf("%v: %v (%v), want %v", k, got, ok, want)
		}
	}
	if len(centers) != 8 {
		t.Errorf("%d centers, want 8 (geomean left out): %v", len(centers), centers)
	}
}
