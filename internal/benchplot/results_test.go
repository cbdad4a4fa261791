package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sample is a small -count 3 run of two packages' benchmarks, with noise
// lines go test prints between results.
const sample = `goos: linux
goarch: amd64
pkg: example.com/ringbuf
cpu: Test CPU @ 3.00GHz
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

func mustRead(t *testing.T, text string) *resultSet {
	t.Helper()
	rs, err := readString("sample", text)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// flat renders a table as "series x=median[min,max]n" strings for comparison.
func flat(tb *table) []string {
	var out []string
	for _, s := range tb.Series {
		for _, p := range s.Points {
			out = append(out, strings.Join([]string{s.Name, " ", p.X, "=", fmtStat(p.Y)}, ""))
		}
	}
	return out
}

func fmtStat(s stat) string {
	return fmt.Sprintf("%s[%s,%s]%d", ftoa(s.Median), ftoa(s.Min), ftoa(s.Max), s.N)
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

func TestSummarise(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want stat
	}{
		{[]float64{5}, stat{N: 1, Median: 5, Min: 5, Max: 5}},
		{[]float64{3, 1, 2}, stat{N: 3, Median: 2, Min: 1, Max: 3}},
		{[]float64{4, 1, 3, 2}, stat{N: 4, Median: 2.5, Min: 1, Max: 4}},
		{[]float64{-1, 7, 7, 0, 100}, stat{N: 5, Median: 7, Min: -1, Max: 100}},
	} {
		if got := summarise(slices.Clone(tc.in)); got != tc.want {
			t.Errorf("summarise(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestGroupXY(t *testing.T) {
	rs := mustRead(t, sample)
	for _, tc := range []struct {
		name          string
		filters       []string
		x, series, y  string
		numeric       bool
		wantXs        []string
		wantNumeric   bool
		want          []string
		wantUsedCount int
	}{
		{
			name: "numeric x sorted by value, series in input order",
			x:    "size", series: "mode", y: "Mrec/s", numeric: true,
			filters:     []string{".name=Read"},
			wantXs:      []string{"64", "512", "4096"},
			wantNumeric: true,
			want: []string{
				"peek 64=20[10,30]3", "peek 512=5[5,5]1", "peek 4096=1.5[1,2]3",
				"copy 64=13[12,14]2", "copy 512=4[4,4]1",
			},
			wantUsedCount: 10,
		},
		{
			name: "written unit ns/op is the value as written",
			x:    "size", series: "mode", y: "ns/op", numeric: true,
			filters: []string{"mode=copy"},
			wantXs:  []string{"64", "512"}, wantNumeric: true,
			want:          []string{"copy 64=200[150,250]2", "copy 512=700[700,700]1"},
			wantUsedCount: 3,
		},
		{
			name: "tidied unit sec/op is in seconds",
			x:    "size", series: "mode", y: "sec/op", numeric: true,
			filters: []string{"mode=copy,size=512"},
			wantXs:  []string{"512"}, wantNumeric: true,
			want:          []string{"copy 512=7e-07[7e-07,7e-07]1"},
			wantUsedCount: 1,
		},
		{
			name: "filter alternatives and categories in input order",
			x:    "case", series: "reader", y: "p99-µs",
			filters:       []string{"reader=ring", "reader=perf"},
			wantXs:        []string{"drop", "pass"},
			want:          []string{"perf drop=85[80,90]2", "ring drop=40[40,40]1", "ring pass=45[45,45]1"},
			wantUsedCount: 4,
		},
		{
			name: "no series key: one series named after the unit",
			x:    "size", y: "Mrec/s", numeric: true,
			filters: []string{"mode=peek"},
			wantXs:  []string{"64", "512", "4096"}, wantNumeric: true,
			want:          []string{"Mrec/s 64=20[10,30]3", "Mrec/s 512=5[5,5]1", "Mrec/s 4096=1.5[1,2]3"},
			wantUsedCount: 7,
		},
		{
			name: "results without the x key are left out",
			x:    "size", series: "mode", y: "ns/op",
			wantXs: []string{"64", "512", "4096"}, wantNumeric: true,
			want: []string{
				"peek 64=200[100,300]3", "peek 512=500[500,500]1", "peek 4096=1100[1000,1200]3",
				"copy 64=200[150,250]2", "copy 512=700[700,700]1",
			},
			wantUsedCount: 10,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseFilters(tc.filters)
			if err != nil {
				t.Fatal(err)
			}
			used, err := f.apply(rs.results)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := groupXY(rs, used, tc.x, tc.series, tc.y, tc.numeric)
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
			if len(tb.Used) != tc.wantUsedCount {
				t.Errorf("used %d results, want %d", len(tb.Used), tc.wantUsedCount)
			}
		})
	}
}

func TestNumericSeriesSorted(t *testing.T) {
	rs := mustRead(t, `BenchmarkW/pps=1000/n=8-2 1 10 ns/op
BenchmarkW/pps=200/n=8-2 1 20 ns/op
BenchmarkW/pps=1000/n=16-2 1 30 ns/op
BenchmarkW/pps=200/n=16-2 1 40 ns/op
`)
	tb, err := groupXY(rs, rs.results, "n", "pps", "ns/op", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(tb); !slices.Equal(got, []string{"200 8=20[20,20]1", "200 16=40[40,40]1", "1000 8=10[10,10]1", "1000 16=30[30,30]1"}) {
		t.Errorf("got %q", got)
	}
}

func TestGroupScatter(t *testing.T) {
	rs := mustRead(t, sample)
	f, _ := parseFilters([]string{"case=drop"})
	used, err := f.apply(rs.results)
	if err != nil {
		t.Fatal(err)
	}
	d, err := groupScatter(rs, used, "reader", "consumer-ms/s", "p99-µs")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range d.Points {
		got = append(got, p.Label+" "+fmtStat(p.X)+" "+fmtStat(p.Y))
	}
	want := []string{"perf 4[3,5]2 85[80,90]2", "ring 1[1,1]1 40[40,40]1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestConfigKeys(t *testing.T) {
	rs := mustRead(t, sample)
	f, _ := parseFilters([]string{"pkg=example.com/xdp"})
	used, err := f.apply(rs.results)
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != 4 {
		t.Fatalf("pkg filter kept %d results, want 4", len(used))
	}
	cpu, plat := machine(used)
	if cpu != "Test CPU @ 3.00GHz" || plat != "linux/amd64" {
		t.Errorf("machine = %q, %q", cpu, plat)
	}
	r := used[0]
	for k, want := range map[string]string{keyName: "XDP", keyProcs: "2", keyFullName: "XDP/case=drop/reader=perf", "case": "drop"} {
		if got := r.keys[k]; got != want {
			t.Errorf("key %s = %q, want %q", k, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	rs := mustRead(t, sample)
	for _, tc := range []struct {
		name         string
		filters      []string
		kind         string
		x, series, y string
		want         string
	}{
		{"filter value matches nothing", []string{"mode=pek"}, "line", "size", "mode", "Mrec/s", "mode is one of peek, copy"},
		{"filter key matches nothing", []string{"touch=head"}, "line", "size", "mode", "Mrec/s", `no result has key "touch"`},
		{"filter conditions exclusive", []string{"mode=peek,case=drop"}, "line", "size", "mode", "Mrec/s", "no result matches all"},
		{"unknown unit", nil, "line", "size", "mode", "Mrecs/s", `unknown unit "Mrecs/s" (units: ns/op, Mrec/s`},
		{"unknown x key", nil, "line", "bytes", "mode", "Mrec/s", `-x: no result has key "bytes"`},
		{"non-numeric x for line", nil, "line", "mode", "size", "Mrec/s", `-kind line needs numeric values of -x mode: "peek" is not a number`},
		{"mixed benchmarks in one group", nil, "bar", "case", "", "ns/op", "differ in reader (perf, ring)"},
		{"mixed base names", []string{"size=64"}, "bar", "size", "", "ns/op", "differ in mode"},
		{"scatter unknown unit", nil, "scatter", "consumer-ms/s", "reader", "p50-µs", `-y: unknown unit "p50-µs"`},
		{"unknown kind", nil, "pie", "size", "mode", "ns/op", `unknown -kind "pie"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseFilters(tc.filters)
			if err != nil {
				t.Fatal(err)
			}
			_, err = build(rs, options{kind: tc.kind, x: tc.x, y: tc.y, series: tc.series, filters: f})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseFilters(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    string
		wantErr bool
	}{
		{[]string{"a=1"}, "a=1", false},
		{[]string{"a=1,b=2", "a=3"}, "a=1,a=3,b=2", false},
		{[]string{"a=1, b=x=y"}, "a=1,b=x=y", false},
		{[]string{"a="}, "a=", false},
		{[]string{"a"}, "", true},
		{[]string{"=1"}, "", true},
	} {
		f, err := parseFilters(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseFilters(%q) error = %v", tc.in, err)
			continue
		}
		if err == nil && f.String() != tc.want {
			t.Errorf("parseFilters(%q) = %s, want %s", tc.in, f, tc.want)
		}
	}
}

func TestReadEmpty(t *testing.T) {
	if _, err := readString("empty", "PASS\nok x 0.1s\n"); err == nil || !strings.Contains(err.Error(), "no benchmark results") {
		t.Errorf("error = %v", err)
	}
}

func TestReadFilesLabels(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(a, []byte("cpu: A\nBenchmarkX/n=1-2 1 10 ns/op\nBenchmarkX/n=1-2 1 30 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("cpu: B\nBenchmarkX/n=1-2 1 20 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := readFiles([]string{"6.1=" + a, "6.12=" + b})
	if err != nil {
		t.Fatal(err)
	}
	if got := valuesOf(rs.results, ".file"); !slices.Equal(got, []string{"6.1", "6.12"}) {
		t.Errorf(".file values = %q", got)
	}
	tb, err := groupXY(rs, rs.results, "n", ".file", "ns/op", true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := flat(tb), []string{"6.1 1=20[10,30]2", "6.12 1=20[20,20]1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if cpu, _ := machine(rs.results); cpu != "A | B" {
		t.Errorf("cpu = %q", cpu)
	}
	// Without a series, the files' results are repetitions of one benchmark.
	tb, err = groupXY(rs, rs.results, "n", "", "ns/op", true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := flat(tb), []string{"ns/op 1=20[10,30]3"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
