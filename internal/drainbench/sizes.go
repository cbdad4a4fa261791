//go:build linux

package drainbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// DefaultSizes are the event sizes BenchmarkRead drains unless told
// otherwise, as ParseSizes accepts them.
const DefaultSizes = "16,64,128,256,512,1024,2048,4096"

// ParseSizes reads a comma-separated list of event sizes, each a multiple
// of 8 and at least 8 (the producer writes whole words and the touch reads
// the first one), or "sweep" for the published sweep, 80..2048 by 16.
func ParseSizes(spec string) ([]int, error) {
	if spec == "sweep" {
		var sizes []int
		for size := 80; size <= 2048; size += 16 {
			sizes = append(sizes, size)
		}
		return sizes, nil
	}
	var sizes []int
	for field := range strings.SplitSeq(spec, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || size < 8 || size%8 != 0 {
			return nil, fmt.Errorf("event size %q: want a multiple of 8, at least 8", field)
		}
		sizes = append(sizes, size)
	}
	return sizes, nil
}

// EnvInt returns the integer in the environment variable name, or def if
// it is unset or not a number: the drain benchmarks' settings for runs
// that cannot pass flags (make, the VM runner).
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// EnvString returns the environment variable name, or def if it is unset
// or empty.
func EnvString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
