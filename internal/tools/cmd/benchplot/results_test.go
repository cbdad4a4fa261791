package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// sample is a small -count 3 run of two packages' benchmarks, with noise
// lines go test prints between results.
const sample = `goos: linux
goarch: amd64
pkg: example.com/ringbuf
cpu: Test CPU @ 3.00GHz
kernel: 6.18.44
BenchmarkRead/size=64/mode=peek-2     	1000	      100 ns/op	  10.0 Mrec/s
BenchmarkRead/size=64/mode=peek-2     	1000	      300 ns/op	  30.0 Mrec/s
BenchmarkRead/size=64/mode=peek-2     	1000	      200 ns/op	  20.0 Mrec/s
BenchmarkRead/size=4096/mode=peek-2   	1000	     1000 ns/op	   1.0 Mrec/s
BenchmarkRead/size=4096/mode=peek-2   	1000	     1200 ns/op	   1.5 Mrec/s
BenchmarkRead/size=4096/mode=peek-2   	1000	     1100 ns/op	   2.0 Mrec/s
BenchmarkRead/size=512/mode=peek-2    	1000	      500 ns/op	   5.0 Mrec/s
BenchmarkRead/size=512/mode=copy-2    	1000	      700 ns/op	   4.0 Mrec/s
BenchmarkRead/size=64/mode=copy-2     	1000	      150 ns/op	  12.0 Mrec/s
BenchmarkRead/size=64/mode=copy-2     	1000	      250 ns/op	  14.0 Mrec/s
PASS
ok  	example.com/ringbuf	1.234s
goos: linux
goarch: amd64
pkg: example.com/xdp
cpu: Test CPU @ 3.00GHz
BenchmarkXDP/case=drop/reader=perf-2  	  10	   5000 ns/op	  3.0 consumer-ms/s	  80 p99-µs
BenchmarkXDP/case=drop/reader=perf-2  	  10	   6000 ns/op	  5.0 consumer-ms/s	  90 p99-µs
BenchmarkXDP/case=drop/reader=ring-2  	  10	   4000 ns/op	  1.0 consumer-ms/s	  40 p99-µs
BenchmarkXDP/case=pass/reader=ring-2  	  10	   4500 ns/op	  1.5 consumer-ms/s	  45 p99-µs
PASS
`

// writeInputs writes each text to a file of its own and returns their
// paths, labelled label=path where a label is given.
func writeInputs(t *testing.T, labelled ...[2]string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, lt := range labelled {
		p := filepath.Join(dir, fmt.Sprintf("in%d.txt", i))
		if err := os.WriteFile(p, []byte(lt[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		if lt[0] != "" {
			p = lt[0] + "=" + p
		}
		paths = append(paths, p)
	}
	return paths
}

// mustSelect selects from text with q, failing the test on error.
func mustSelect(t *testing.T, q query, text string) *selection {
	t.Helper()
	sel, err := selectResults(&benchfmt.Files{Paths: writeInputs(t, [2]string{"", text}), AllowLabels: true}, q)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// flat renders a table as "series x=median[lo,hi]n" strings for comparison.
func flat(tb *table) []string {
	var out []string
	for _, s := range tb.Series {
		for _, p := range s.Points {
			out = append(out, s.Name+" "+p.X+"="+fmtStat(p.Y))
		}
	}
	return out
}

func fmtStat(s stat) string {
	return fmt.Sprintf("%s[%s,%s]%d", ftoa(s.Median), ftoa(s.Lo), ftoa(s.Hi), s.N)
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

func TestSummarise(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     []float64
		want   stat
		wantCI bool
	}{
		{"one run", []float64{5}, stat{N: 1, Median: 5, Lo: 5, Hi: 5}, false},
		{"three runs: min-max", []float64{3, 1, 2}, stat{N: 3, Median: 2, Lo: 1, Hi: 3}, false},
		{"four runs: median of the middle two", []float64{4, 1, 3, 2}, stat{N: 4, Median: 2.5, Lo: 1, Hi: 4}, false},
		// benchmath's distribution-free interval of the median at 95 %
		// needs 6 runs; with 6 it spans the whole sample.
		{"six runs: confidence interval", []float64{6, 1, 5, 2, 4, 3}, stat{N: 6, Median: 3.5, Lo: 1, Hi: 6, CI: true}, true},
		// With 10 runs the interval leaves out the extremes.
		{"ten runs: narrower interval", []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, stat{N: 10, Median: 5.5, Lo: 2, Hi: 9, CI: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarise(slices.Clone(tc.in))
			if got != tc.want {
				t.Errorf("summarise(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
			if math.IsInf(got.Lo, 0) || math.IsInf(got.Hi, 0) {
				t.Errorf("summarise(%v) has an infinite bound", tc.in)
			}
		})
	}
}

func TestTable(t *testing.T) {
	for _, tc := range []struct {
		name        string
		q           query
		numeric     bool
		wantXs      []string
		wantNumeric bool
		want        []string
	}{
		{
			name:    "numeric x sorted by value, series in input order",
			q:       query{filter: ".name:Read", x: "/size", series: "/mode", y: "Mrec/s"},
			numeric: true, wantXs: []string{"64", "512", "4096"}, wantNumeric: true,
			want: []string{
				"peek 64=20[10,30]3", "peek 512=5[5,5]1", "peek 4096=1.5[1,2]3",
				"copy 64=13[12,14]2", "copy 512=4[4,4]1",
			},
		},
		{
			name:    "fixed series order, which also filters",
			q:       query{filter: ".name:Read", x: "/size", series: "/mode@(copy)", y: "Mrec/s"},
			numeric: true, wantXs: []string{"64", "512"}, wantNumeric: true,
			want: []string{"copy 64=13[12,14]2", "copy 512=4[4,4]1"},
		},
		{
			name:    "written unit ns/op is the value as written",
			q:       query{filter: "/mode:copy", x: "/size", series: "/mode", y: "ns/op"},
			numeric: true, wantXs: []string{"64", "512"}, wantNumeric: true,
			want: []string{"copy 64=200[150,250]2", "copy 512=700[700,700]1"},
		},
		{
			name:    "tidied unit sec/op is in seconds",
			q:       query{filter: "/mode:copy /size:512", x: "/size", series: "/mode", y: "sec/op"},
			numeric: true, wantXs: []string{"512"}, wantNumeric: true,
			want: []string{"copy 512=7e-07[7e-07,7e-07]1"},
		},
		{
			name:   "filter alternatives, categories in input order",
			q:      query{filter: "/reader:(ring OR perf)", x: "/case", series: "/reader", y: "p99-µs"},
			wantXs: []string{"drop", "pass"},
			want:   []string{"perf drop=85[80,90]2", "ring drop=40[40,40]1", "ring pass=45[45,45]1"},
		},
		{
			name:    "no series: one series named after the unit",
			q:       query{filter: "/mode:peek", x: "/size", y: "Mrec/s"},
			numeric: true, wantXs: []string{"64", "512", "4096"}, wantNumeric: true,
			want: []string{"Mrec/s 64=20[10,30]3", "Mrec/s 512=5[5,5]1", "Mrec/s 4096=1.5[1,2]3"},
		},
		{
			name:   "results without the x key are left out",
			q:      query{x: "/size", series: "/mode", y: "ns/op"},
			wantXs: []string{"64", "512", "4096"}, wantNumeric: true,
			want: []string{
				"peek 64=200[100,300]3", "peek 512=500[500,500]1", "peek 4096=1100[1000,1200]3",
				"copy 64=200[150,250]2", "copy 512=700[700,700]1",
			},
		},
		{
			name:    "a tuple series",
			q:       query{filter: ".name:XDP /case:drop", x: "/case", series: ".name,/reader", y: "p99-µs"},
			wantXs:  []string{"drop"},
			want:    []string{"XDP perf drop=85[80,90]2", "XDP ring drop=40[40,40]1"},
			numeric: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := mustSelect(t, tc.q, sample)
			tb, err := sel.table(tc.numeric)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tb.Xs, tc.wantXs) {
				t.Errorf("Xs = %v, want %v", tb.Xs, tc.wantXs)
			}
			if tb.Numeric != tc.wantNumeric {
				t.Errorf("Numeric = %v, want %v", tb.Numeric, tc.wantNumeric)
			}
			if got := flat(tb); !slices.Equal(got, tc.want) {
				t.Errorf("points:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestNumericSeriesSorted(t *testing.T) {
	sel := mustSelect(t, query{x: "/n", series: "/pps@num", y: "ns/op"}, `BenchmarkW/pps=1000/n=8-2 1 10 ns/op
BenchmarkW/pps=200/n=8-2 1 20 ns/op
BenchmarkW/pps=1000/n=16-2 1 30 ns/op
BenchmarkW/pps=200/n=16-2 1 40 ns/op
`)
	tb, err := sel.table(true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := flat(tb), []string{"200 8=20[20,20]1", "200 16=40[40,40]1", "1000 8=10[10,10]1", "1000 16=30[30,30]1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestScatter(t *testing.T) {
	sel := mustSelect(t, query{filter: "/case:drop", x: "consumer-ms/s", y: "p99-µs", series: "/reader", scatter: true}, sample)
	var got []string
	for _, p := range sel.scatter().Points {
		got = append(got, p.Label+" "+fmtStat(p.X)+" "+fmtStat(p.Y))
	}
	if want := []string{"perf 4[3,5]2 85[80,90]2", "ring 1[1,1]1 40[40,40]1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMachine(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   machine
	}{
		// A configuration line holds until the input changes it, so
		// the kernel line before the first package's results holds for
		// the second's too.
		{"pkg:example.com/ringbuf", machine{cpu: "Test CPU @ 3.00GHz", kernel: "6.18.44", platform: "linux/amd64"}},
		{"pkg:example.com/xdp", machine{cpu: "Test CPU @ 3.00GHz", kernel: "6.18.44", platform: "linux/amd64"}},
	} {
		sel := mustSelect(t, query{filter: tc.filter, x: ".name", y: "ns/op", series: ".fullname"}, sample)
		if got := sel.machine(); got != tc.want {
			t.Errorf("-filter %s: machine = %+v, want %+v", tc.filter, got, tc.want)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    query
		want string
	}{
		{"filter matches nothing", query{filter: "/mode:pek", x: "/size", y: "Mrec/s"}, "no results match -filter /mode:pek"},
		{"bad filter syntax", query{filter: "/mode:(peek", x: "/size", y: "Mrec/s"}, "-filter:"},
		{"bad projection syntax", query{x: "/size@(", y: "Mrec/s"}, "-x:"},
		{"no x", query{y: "Mrec/s"}, "-x: no projection given"},
		{"no unit", query{x: "/size"}, "no unit given"},
		{"unknown unit", query{x: "/size", y: "Mrecs/s"}, `unknown unit "Mrecs/s" (units: ns/op, Mrec/s`},
		{"unit and key never together", query{filter: ".name:XDP", x: "/size", y: "p99-µs"}, "no result kept by -filter has unit p99-µs, -x /size together"},
		{"a point would pool touch variants", query{filter: ".name:XDP", x: "/case", y: "ns/op"}, "vary in .fullname (XDP/reader=perf-2, XDP/reader=ring-2)"},
		{"a point would pool benchmarks", query{filter: "/size:64", x: "/size", y: "ns/op"}, "vary in .fullname (Read/mode=copy-2, Read/mode=peek-2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := selectResults(&benchfmt.Files{Paths: writeInputs(t, [2]string{"", sample})}, tc.q)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReadEmpty(t *testing.T) {
	_, err := selectResults(&benchfmt.Files{Paths: writeInputs(t, [2]string{"", "PASS\nok x 0.1s\n"})}, query{x: "/n", y: "ns/op"})
	if err == nil || !strings.Contains(err.Error(), "no benchmark results") {
		t.Errorf("error = %v", err)
	}
}

func TestFileLabels(t *testing.T) {
	paths := writeInputs(t,
		[2]string{"6.1", "cpu: A\nBenchmarkX/n=1-2 1 10 ns/op\nBenchmarkX/n=1-2 1 30 ns/op\n"},
		[2]string{"6.12", "cpu: B\nBenchmarkX/n=1-2 1 20 ns/op\n"})
	sel, err := selectResults(&benchfmt.Files{Paths: paths, AllowLabels: true}, query{x: "/n", series: ".file", y: "ns/op"})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := sel.table(true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := flat(tb), []string{"6.1 1=20[10,30]2", "6.12 1=20[20,20]1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if m := sel.machine(); m.cpu != "A | B" {
		t.Errorf("cpu = %q", m.cpu)
	}
	// Without .file projected, the two files are different
	// configurations, as benchstat would say.
	_, err = selectResults(&benchfmt.Files{Paths: paths, AllowLabels: true}, query{x: "/n", y: "ns/op"})
	if err == nil || !strings.Contains(err.Error(), "vary in") {
		t.Errorf("pooling two files: error = %v, want a vary-in error", err)
	}
}
