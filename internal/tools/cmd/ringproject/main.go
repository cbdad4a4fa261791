// Command ringproject writes the lock-contention projection of
// internal/ringmodel for BenchmarkRings results, in the benchmark format,
// so benchplot draws it next to the measured points:
//
//	go -C internal/tools run ./cmd/ringproject -producers 1,2,8,32,128 results.txt > projection.txt
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// main projects the one results file named on the command line to
// stdout, exiting 2 with the error on stderr if it cannot.
func main() {
	counts := flag.String("producers", "1,2,8,32,128", "comma-separated `counts` of producers to project to")
	flag.Parse()
	if err := run(flag.Args(), *counts); err != nil {
		fmt.Fprintln(os.Stderr, "ringproject:", err)
		os.Exit(2)
	}
}

func run(args []string, counts string) error {
	if len(args) != 1 {
		return fmt.Errorf("want one results file, got %d arguments", len(args))
	}
	var producers []int
	for f := range strings.SplitSeq(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-producers %q: %w", counts, err)
		}
		producers = append(producers, n)
	}
	in, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer in.Close()
	return Project(in, args[0], os.Stdout, producers)
}
