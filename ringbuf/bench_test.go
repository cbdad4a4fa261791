//go:build linux

package ringbuf_test

import (
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
	"github.com/ebpf-zc/ebpf/internal/drainbench"
	"github.com/ebpf-zc/ebpf/internal/drainbench/ours"
	"github.com/ebpf-zc/ebpf/internal/libbpfdrain"
	"github.com/ebpf-zc/ebpf/internal/rawring"
)

// The ring size and the event sizes can be set by flag or, for runs that
// cannot pass flags (make, the VM runner), by environment variable.
var (
	benchRing = flag.Int("ringbuf.ring", benchfamily.MustInt("RINGBUF_BENCH_RING"),
		"ring buffer size in bytes for the ringbuf benchmarks (env RINGBUF_BENCH_RING)")
	benchSizes = flag.String("ringbuf.sizes", benchfamily.MustText("RINGBUF_BENCH_SIZES"),
		"comma-separated event sizes, or 'sweep' for 80..2048 in steps of 16 (env RINGBUF_BENCH_SIZES)")
)

// modes are BenchmarkRead's readers: upstream's, ours (internal/drainbench
// holds them, shared with make bench-upstream), the floor, cilium/ebpf
// main's lease technique, and the libbpf peer.
var modes = append(append([]drainbench.Mode{{Name: "upstream", Open: drainbench.OpenUpstream}}, ours.Modes...),
	drainbench.Mode{Name: "floor", Open: openFloor},
	drainbench.Mode{Name: "lease", Open: openLease(false)},
	drainbench.Mode{Name: "lease-each", Open: openLease(true)},
	drainbench.Mode{Name: "libbpf", Open: openLibbpf},
)

// BenchmarkRead drains rings that a test-run program filled, each mode in
// turn; an op is one record. The fill is not timed; the count and the sum
// of what each mode touched are checked.
func BenchmarkRead(b *testing.B) {
	sizes, err := drainbench.ParseSizes(*benchSizes)
	if err != nil {
		b.Fatal(err)
	}
	drainbench.Run(b, *benchRing, sizes, modes)
}

// libbpf: the C peer, ring_buffer__consume with a C callback doing the
// same touch, one cgo call per drain.
func openLibbpf(m *ebpf.Map) (drainbench.Drainer, error) {
	d, err := libbpfdrain.Open(m)
	if errors.Is(err, libbpfdrain.ErrNoLibbpf) {
		return nil, fmt.Errorf("%w: %w", drainbench.ErrModeUnavailable, err)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// floor: no API at all, the fastest correct loop over the raw mapping we
// know (rawring.Floor): a local consumer position, one producer load and
// one consumer store per drain, a walk that stays in registers and, for
// touch=head, reads two records ahead of records of 256 bytes or more.
type floorDrainer struct {
	ring  *rawring.Ring
	floor *rawring.Floor
}

func openFloor(m *ebpf.Map) (drainbench.Drainer, error) {
	ring, err := rawring.Map(m)
	if err != nil {
		return nil, err
	}
	return &floorDrainer{ring: ring, floor: rawring.NewFloor(ring)}, nil
}

func (d *floorDrainer) Drain(n int, all bool) (uint64, error) { return d.floor.Drain(n, all) }

func (d *floorDrainer) Close() error { return d.ring.Close() }

// lease: cilium/ebpf main's RawReader technique (rawring.RawReader), used
// as its docs suggest for batching: read samples in a lease, commit when
// the ring looks empty (remain == 0) and when the drain ends; lease-each
// commits after every record instead.
type leaseDrainer struct {
	ring *rawring.Ring
	rd   *rawring.RawReader
	each bool
}

func openLease(each bool) func(m *ebpf.Map) (drainbench.Drainer, error) {
	return func(m *ebpf.Map) (drainbench.Drainer, error) {
		ring, err := rawring.Map(m)
		if err != nil {
			return nil, err
		}
		return &leaseDrainer{ring: ring, rd: rawring.NewRawReader(ring), each: each}, nil
	}
}

func (d *leaseDrainer) Drain(n int, all bool) (sum uint64, err error) {
	err = d.rd.WithLease(func(l rawring.Lease) error {
		defer l.Commit()
		for got := 0; got < n; {
			sample, remain, err := l.ReadSample()
			if err != nil {
				return fmt.Errorf("lease: after %d of %d records: %w", got, n, err)
			}
			if sample != nil { // nil: a discarded record
				sum += drainbench.Touch(sample, all)
				got++
			}
			if d.each || remain == 0 {
				l.Commit()
			}
		}
		return nil
	})
	return sum, err
}

func (d *leaseDrainer) Close() error { return d.ring.Close() }
