//go:build linux

package benchfamily

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// nonzero reports whether a result's value is not zero (or not a number).
func nonzero(v string) bool {
	f, err := strconv.ParseFloat(v, 64)
	return err != nil || f != 0
}

// eachResult calls fn with the fields of every result line of bench (a
// prefix of the benchmark's name, "BenchmarkRings") in the results file.
func eachResult(results, bench string, fn func(line string, fields []string)) error {
	f, err := os.Open(results)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), bench) {
			fn(sc.Text(), strings.Fields(sc.Text()))
		}
	}
	return sc.Err()
}

// valueOf is the value a result line gives unit, and whether it has one.
func valueOf(fields []string, unit string) (string, bool) {
	for i := 2; i+1 < len(fields); i++ {
		if fields[i+1] == unit {
			return fields[i], true
		}
	}
	return "", false
}

// noAllocs fails if any result of -benchmem allocates, after listing it;
// benchstat's tables of allocs/op would be all zero.
func noAllocs(results string, w Printer) error {
	n, bad := 0, 0
	err := eachResult(results, "Benchmark", func(line string, fields []string) {
		if v, ok := valueOf(fields, "allocs/op"); ok {
			n++
			if nonzero(v) {
				bad++
				w.Printf("allocates: %s\n", line)
			}
		}
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d results allocate", bad, n)
	}
	w.Printf("%d results, 0 allocs/op in every one\n", n)
	return nil
}

// listLosses lists every result of bench that lost events (lost-%), and
// counts them.
func listLosses(bench string) func(results string, w Printer) error {
	return func(results string, w Printer) error {
		n, lost := 0, 0
		err := eachResult(results, bench, func(line string, fields []string) {
			if v, ok := valueOf(fields, "lost-%"); ok {
				n++
				if nonzero(v) {
					lost++
					w.Printf("lost: %s\n", line)
				}
			}
		})
		if err == nil {
			w.Printf("%d results, %d with a loss\n", n, lost)
		}
		return err
	}
}
