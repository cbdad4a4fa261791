package main

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// synthetic writes a go test -bench output of two packages with -count 6:
// a ring buffer read sweep over size, mode and touch, and an XDP reader
// comparison with custom metrics. It is a few hundred result lines.
func synthetic() string {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(v float64) float64 { return v * (1 + 0.08*(rng.Float64()-0.5)) }
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/ebpf-zc/ebpf/ringbuf\ncpu: AMD EPYC 7B13\n")
	modes := map[string]float64{"peek": 1, "copy": 1.6, "readinto": 1.25}
	for _, touch := range []string{"head", "all"} {
		for _, size := range []int{16, 64, 256, 1024, 4096, 16384} {
			for _, mode := range []string{"peek", "copy", "readinto"} {
				for range 6 {
					ns := noise(60 + modes[mode]*float64(size)*0.05)
					if touch == "all" {
						ns += float64(size) * 0.1
					}
					fmt.Fprintf(&b, "BenchmarkRead/size=%d/mode=%s/touch=%s-2 \t%d\t%.1f ns/op\t%.2f MB/s\t%.2f Mrec/s\t0 B/op\t0 allocs/op\n",
						size, mode, touch, int(1e9/ns), ns, float64(size)/ns*1e3, 1e3/ns)
				}
			}
		}
	}
	b.WriteString("PASS\nok  \tgithub.com/ebpf-zc/ebpf/ringbuf\t12.3s\n")
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/ebpf-zc/ebpf/bench\ncpu: AMD EPYC 7B13\n")
	readers := map[string][2]float64{"perf": {310, 95}, "ringbuf": {180, 60}, "ringbuf-readinto": {150, 48}, "upstream": {240, 75}}
	for _, c := range []string{"drop", "pass", "redirect"} {
		for _, r := range []string{"perf", "ringbuf", "ringbuf-readinto", "upstream"} {
			for range 6 {
				m := readers[r]
				fmt.Fprintf(&b, "BenchmarkXDP/case=%s/reader=%s-2 \t100\t%.0f ns/op\t%.1f consumer-ms/s\t%.1f p99-µs\t%.0f Mpps\n",
					c, r, noise(1e6), noise(m[0]), noise(m[1]), noise(1.2))
			}
		}
	}
	b.WriteString("PASS\nok  \tgithub.com/ebpf-zc/ebpf/bench\t30.1s\n")
	return b.String()
}

// outDir is where rendered plots go: a temporary directory, or the one
// named by BENCHPLOT_KEEP so a person can look at them.
func outDir(t *testing.T) string {
	if d := os.Getenv("BENCHPLOT_KEEP"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func TestRenderKinds(t *testing.T) {
	dir := outDir(t)
	in := filepath.Join(t.TempDir(), "results.txt")
	data := synthetic()
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(data, "\nBenchmark"); n < 200 {
		t.Fatalf("synthetic input has only %d results", n)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"line", []string{"-kind", "line", "-x", "/size", "-y", "Mrec/s", "-series", "/mode", "-filter", "/touch:head", "-logx", "-logy", "-note", "kernel 6.12.117"}},
		{"bar", []string{"-kind", "bar", "-x", "/case", "-y", "consumer-ms/s", "-series", "/reader", "-title", "Consumer CPU by case"}},
		{"log bar", []string{"-kind", "bar", "-x", "/case", "-y", "consumer-ms/s", "-series", "/reader", "-logy", "-ylabel", "consumer CPU (ms/s)"}},
		{"scatter", []string{"-kind", "scatter", "-x", "consumer-ms/s", "-y", "p99-µs", "-series", "/reader", "-filter", "/case:drop", "-logx", "-logy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := filepath.Join(dir, tc.name)
			var stdout, stderr bytes.Buffer
			args := append([]string{"-in", in, "-out", prefix}, tc.args...)
			if err := run(args, &stdout, &stderr); err != nil {
				t.Fatalf("run %q: %v\n%s", args, err, stderr.String())
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr: %s", stderr.String())
			}
			for _, ext := range []string{".svg", ".png"} {
				fi, err := os.Stat(prefix + ext)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Size() == 0 {
					t.Fatalf("%s is empty", prefix+ext)
				}
				if !strings.Contains(stdout.String(), prefix+ext) {
					t.Errorf("stdout %q does not name %s", stdout.String(), prefix+ext)
				}
			}
			f, err := os.Open(prefix + ".png")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatalf("decoding %s.png: %v", prefix, err)
			}
			if b := img.Bounds(); b.Dx() != 8*150 || b.Dy() != 5*150 {
				t.Errorf("png is %v, want 1200x750", b)
			}
			svg, err := os.ReadFile(prefix + ".svg")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(svg, []byte("AMD EPYC 7B13")) {
				t.Errorf("svg lacks the cpu caption")
			}
		})
	}
}

// TestDenseLine draws a sweep, 60 sizes a line, with the ticks asked
// for: the spread is drawn as bands, which the caption says, and every
// tick is labelled.
func TestDenseLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("cpu: Intel Xeon\n")
	for run := range 3 {
		for size := 16; size <= 488; size += 8 {
			for _, mode := range []string{"copy", "records"} {
				rate := 2000 / float64(size+8) * (1 + 0.01*float64(run))
				if mode == "records" && size >= 160 {
					rate *= 0.7 // the hole the plot is for
				}
				fmt.Fprintf(&b, "BenchmarkRead/size=%d/mode=%s-2 \t1000\t%.2f ns/op\t%.3f Mrec/s\n", size, mode, 1e3/rate, rate)
			}
		}
	}
	in := filepath.Join(t.TempDir(), "sweep.txt")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(outDir(t), "dense")
	var stderr bytes.Buffer
	args := []string{"-in", in, "-out", prefix, "-x", "/size", "-y", "Mrec/s", "-series", "/mode", "-logx", "-logy", "-xticks", "16,32,64,128,160,256,512"}
	if err := run(args, io.Discard, &stderr); err != nil {
		t.Fatalf("run %q: %v\n%s", args, err, stderr.String())
	}
	svg, err := os.ReadFile(prefix + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bands span min–max", ">160<", ">512<"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.txt", sample)
	zero := write("zero.txt", "BenchmarkR/size=0-2 1 5 ns/op\nBenchmarkR/size=8-2 1 6 ns/op\n")
	zeroValue := write("zerovalue.txt", "BenchmarkR/size=1-2 1 0 ns/op\n")
	inf := write("inf.txt", "BenchmarkR/size=1-2 1 +Inf ns/op\n")
	empty := write("empty.txt", "PASS\n")
	garbled := write("garbled.txt", "BenchmarkR/size=1-2 x 5 ns/op\n")
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-in", good, "-x", "/size", "-y", "Mrec/s", "-filter", "/mode:none"}, "no results match -filter /mode:none"},
		{[]string{"-in", good, "-x", "/size", "-y", "furlongs/op"}, `unknown unit "furlongs/op"`},
		{[]string{"-in", good, "-x", "/mode", "-y", "Mrec/s", "-series", "/size"}, "needs numeric values of -x /mode"},
		{[]string{"-in", good, "-x", "/size", "-y", "Mrec/s", "-filter", "mode=peek"}, "-filter:"},
		{[]string{"-in", zero, "-x", "/size", "-y", "ns/op", "-logx"}, "-logx needs positive x values"},
		{[]string{"-in", zeroValue, "-kind", "bar", "-x", "/size", "-y", "ns/op", "-logy"}, "-logy needs positive values"},
		{[]string{"-in", inf, "-x", "/size", "-y", "ns/op"}, "cannot be plotted"},
		{[]string{"-in", empty, "-x", "/size", "-y", "ns/op"}, "no benchmark results"},
		{[]string{"-in", garbled, "-x", "/size", "-y", "ns/op"}, "no benchmark results"},
		{[]string{"-in", filepath.Join(dir, "missing.txt"), "-x", "/size", "-y", "ns/op"}, "missing.txt"},
		{[]string{"-in", good, "-kind", "bar", "-x", "/size", "-y", "ns/op", "-series", "/mode", "-logx"}, "-logx is not supported"},
		{[]string{"-in", good, "-kind", "pie", "-x", "/size", "-y", "ns/op"}, `unknown -kind "pie"`},
		{[]string{"-in", good, "-x", "/size", "-y", "ns/op", "-width", "0"}, "-width"},
		{[]string{"-in", good, "-kind", "scatter", "-x", "ns/op", "-y", "p99-µs", "-series", "/case"}, "vary in .fullname"},
		{[]string{"-in", good, "-x", "/size", "-y", "ns/op", "-xticks", "16,x"}, `"x" is not a number`},
		{[]string{"-in", good, "-kind", "bar", "-x", "/size", "-y", "ns/op", "-xticks", "16"}, "-xticks is for -kind line"},
		{[]string{"-in", good, "-x", "/size", "-y", "Mrec/s", "-series", "/mode", "-logx", "-xticks", "0,16"}, "-logx needs positive -xticks"},
	} {
		err := run(append(tc.args, "-out", out), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: error = %v, want it to contain %q", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(out + ".png"); err == nil {
		t.Errorf("a failed run wrote %s.png", out)
	}
}

func TestWrap(t *testing.T) {
	p := newPlot(options{}, "t", "x", "y", true)
	sty := p.X.Tick.Label
	long := strings.Repeat("word ", 60)
	lines := wrap(sty, long, 200)
	if len(lines) < 2 {
		t.Fatalf("wrap gave %d lines", len(lines))
	}
	for _, l := range lines {
		if w := sty.Width(l); w > 200 && strings.Contains(l, " ") {
			t.Errorf("line %q is %v wide", l, w)
		}
	}
	if got := strings.Join(lines, " "); got != strings.TrimSpace(long) {
		t.Errorf("wrap lost words")
	}
}

// TestStyleDistinct checks that no two of the first 72 series share both
// colour and marker, which would make the legend ambiguous, that the
// first 8 have distinct markers (a greyscale print tells them apart by
// those) and distinct colours, and that only one colour is a red.
func TestStyleDistinct(t *testing.T) {
	reds := 0
	for _, c := range palette {
		r, g, b, _ := c.RGBA()
		if r > 2*g && r > 2*b {
			reds++
		}
	}
	if reds != 1 {
		t.Errorf("palette has %d reds, want 1", reds)
	}
	colours, shapes := map[color.Color]int{}, map[string]int{}
	for i := range 8 {
		clr, shape, _ := style(i)
		if j, ok := colours[clr]; ok {
			t.Errorf("series %d and %d share a colour", j, i)
		}
		colours[clr] = i
		key := fmt.Sprintf("%T %v", shape, shape)
		if j, ok := shapes[key]; ok {
			t.Errorf("series %d and %d share a marker", j, i)
		}
		shapes[key] = i
	}
	seen := map[string]int{}
	for i := range 72 {
		clr, shape, _ := style(i)
		r, g, b, a := clr.RGBA()
		key := fmt.Sprintf("%d %d %d %d %T %v", r, g, b, a, shape, shape)
		if j, ok := seen[key]; ok {
			t.Fatalf("series %d and %d look alike", j, i)
		}
		seen[key] = i
	}
}

// TestUnreadableLinesReported checks that lines benchfmt cannot read are
// named on stderr, also when they leave nothing to plot.
func TestUnreadableLinesReported(t *testing.T) {
	in := filepath.Join(t.TempDir(), "garbled.txt")
	if err := os.WriteFile(in, []byte("BenchmarkR/size=1-2 x 5 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := run([]string{"-in", in, "-x", "/size", "-y", "ns/op", "-out", filepath.Join(t.TempDir(), "out")}, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no benchmark results") {
		t.Errorf("error = %v, want no benchmark results", err)
	}
	if !strings.Contains(stderr.String(), "skipped:") || !strings.Contains(stderr.String(), "garbled.txt:1") {
		t.Errorf("stderr = %q, want the unreadable line named", stderr.String())
	}
}
