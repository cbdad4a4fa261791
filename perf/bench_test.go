//go:build linux

package perf_test

import (
	"flag"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
	"github.com/ebpf-zc/ebpf/internal/benchknob"
	"github.com/ebpf-zc/ebpf/internal/perfdrain"
)

// The buffer size and the event sizes can be set by flag or, for runs
// that cannot pass flags (make, the VM runner), by environment variable.
var (
	benchBuffer = flag.Int("perf.buffer", benchfamily.MustInt("PERF_BENCH_BUFFER"),
		"per-CPU buffer size in bytes for the perf drain benchmark (env PERF_BENCH_BUFFER)")
	benchSizes = flag.String("perf.sizes", benchfamily.MustText("PERF_BENCH_SIZES"),
		"comma-separated event sizes for the perf drain benchmark (env PERF_BENCH_SIZES)")
)

// BenchmarkRead drains perf buffers that a test-run program filled on the
// benchmark's CPU, each mode in turn (cilium/ebpf's ReadInto, ours, our
// Records, our Batches), every reader with a watermark of half a buffer;
// an op is one record. The fill is not timed; the count and the sum of what each mode
// touched are checked.
func BenchmarkRead(b *testing.B) {
	sizes, err := benchknob.ParseSizes(*benchSizes)
	if err != nil {
		b.Fatal(err)
	}
	perfdrain.Run(b, *benchBuffer, sizes, perfdrain.Modes)
}
