//go:build linux

// Command benchsummary prints the one summary a make bench target ends
// with: for each comparison the target exists for, the multiple of a base
// that each benchmark reaches, row by row, as benchstat says on the
// results file (a significant change, or "~"), then a verdict, all within
// 80 columns. Every number is benchstat's: the summary runs
// benchstat -format csv (-benchstat names it) and formats what it prints.
//
//	benchsummary -kind ringbuf -tables results/ringbuf-tables.txt results/ringbuf.txt
//
// The kind is a benchmark family (benchrun -list names them), whose
// description (internal/benchfamily) declares its sections, or upstream,
// a make bench-upstream directory. Which modes, readers or strategies to
// show comes from the results file, so a mode added to a benchmark
// appears without a change here.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

func main() {
	kind := flag.String("kind", "ringbuf", "which target's results: a benchmark family ("+kindNames()+"), or upstream (a bench-upstream directory)")
	tables := flag.String("tables", "", "the file holding the full benchstat tables, named under the summary")
	benchstat := flag.String("benchstat", "benchstat", "the benchstat `command` (make builds it from internal/tools)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchsummary -kind "+strings.ReplaceAll(kindNames(), ", ", "|")+"|upstream [-tables file] results.txt|directory")
		os.Exit(2)
	}
	if err := run(*kind, flag.Arg(0), *tables, *benchstat); err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(1)
	}
}

func run(kind, file, tables, benchstat string) error {
	var sections []*section
	if kind == "upstream" {
		// A bench-upstream results directory: base.txt and head.txt.
		var err error
		sections, err = upstreamSections(filepath.Join(file, "base.txt"), filepath.Join(file, "head.txt"))
		if err != nil {
			return err
		}
	} else {
		family, err := benchfamily.Named(kind)
		if err != nil {
			return err
		}
		values, err := scanValues(file)
		if err != nil {
			return err
		}
		sections = familySections(family, values)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "\n%s\n", strings.Repeat("=", width))
	fmt.Fprintf(w, "Summary of %s\n", file)
	// A sweep's section reads medians, and says so in its title.
	if slices.ContainsFunc(sections, func(s *section) bool { return s.sweep == nil }) {
		fmt.Fprintln(w, legend)
	}
	for _, s := range sections {
		fmt.Fprintln(w)
		if err := s.render(w, []string{benchstat}, file); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if tables != "" {
		fmt.Fprintf(w, "Full benchstat tables: %s\n", tables)
	}
	return nil
}

// legend heads every summary: how to read its cells and verdicts.
const legend = "Every multiple is benchstat's, significant at p < 0.05; ~ is not; (~2): 2 rows ~"

// kindNames are the families' names, for the usage.
func kindNames() string {
	var names []string
	for _, f := range benchfamily.All() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// scanValues reads the key=value parts of every result's name.
func scanValues(file string) (benchfamily.Values, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	values := benchfamily.Values{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		name, _, ok := strings.Cut(sc.Text(), "\t")
		if !ok || !strings.HasPrefix(name, "Benchmark") {
			continue
		}
		name = strings.TrimSpace(name)
		// The -GOMAXPROCS suffix belongs to the last part.
		if i := strings.LastIndex(name, "-"); i > strings.LastIndex(name, "/") && strings.Trim(name[i+1:], "0123456789") == "" {
			name = name[:i]
		}
		parts := strings.Split(strings.TrimPrefix(name, "Benchmark"), "/")
		bench := parts[0]
		if values[bench] == nil {
			values[bench] = map[string][]string{}
		}
		for _, p := range parts[1:] {
			k, v, ok := strings.Cut(p, "=")
			if ok && !slices.Contains(values[bench][k], v) {
				values[bench][k] = append(values[bench][k], v)
			}
		}
	}
	return values, sc.Err()
}
