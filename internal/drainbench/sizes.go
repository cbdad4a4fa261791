//go:build linux

package drainbench

import (
	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// DefaultSizes are the event sizes BenchmarkRead drains unless told
// otherwise, as ParseSizes accepts them: [benchknob.DefaultSizes].
const DefaultSizes = benchknob.DefaultSizes

// ParseSizes reads a comma-separated list of event sizes, each a multiple
// of 8 and at least 8 (the producer writes whole words and the touch reads
// the first one), or "sweep" for the published sweep, 80..2048 by 16: it
// is [benchknob.ParseSizes].
func ParseSizes(spec string) ([]int, error) { return benchknob.ParseSizes(spec) }
