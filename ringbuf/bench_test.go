//go:build linux

package ringbuf_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/libbpfdrain"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/rawring"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// The ring size and the event sizes can be set by flag or, for runs that
// cannot pass flags (make, the VM runner), by environment variable.
var (
	benchRing = flag.Int("ringbuf.ring", envInt("RINGBUF_BENCH_RING", 256<<20),
		"ring buffer size in bytes for the ringbuf benchmarks (env RINGBUF_BENCH_RING)")
	benchSizes = flag.String("ringbuf.sizes", envString("RINGBUF_BENCH_SIZES", "16,64,128,256,512,1024,2048,4096"),
		"comma-separated event sizes, or 'sweep' for 80..2048 in steps of 16 (env RINGBUF_BENCH_SIZES)")
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func eventSizes(tb testing.TB) []int {
	if *benchSizes == "sweep" {
		var sizes []int
		for size := 80; size <= 2048; size += 16 {
			sizes = append(sizes, size)
		}
		return sizes
	}
	var sizes []int
	for _, field := range strings.Split(*benchSizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || size < 8 || size%8 != 0 {
			tb.Fatalf("event size %q: want a multiple of 8, at least 8", field)
		}
		sizes = append(sizes, size)
	}
	return sizes
}

// A drainer consumes exactly n records, touching each one, and returns the
// sum of what it touched. Every mode touches the same bytes, so the sums
// prove that none skipped work.
type drainer interface {
	drain(n int, all bool) (uint64, error)
	Close() error
}

// touch is the consumer's work on each record, the same in every mode.
func touch(b []byte, all bool) uint64 { return rawring.Touch(b, all) }

var modes = []struct {
	name string
	open func(m *ebpf.Map) (drainer, error)
}{
	{"upstream", openUpstream},
	{"copy", openCopy},
	{"peek", openPeek},
	{"records", openRecords},
	{"floor", openFloor},
	{"lease", openLease(false)},
	{"lease-each", openLease(true)},
	{"libbpf", openLibbpf},
}

// BenchmarkRead drains rings that a test-run program filled, each mode in
// turn; an op is one record. The fill is not timed.
func BenchmarkRead(b *testing.B) {
	for _, size := range eventSizes(b) {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			fix := newFixture(b, size)
			for _, mode := range modes {
				for _, all := range []bool{false, true} {
					name := fmt.Sprintf("mode=%s/touch=%s", mode.name, map[bool]string{false: "head", true: "all"}[all])
					b.Run(name, func(b *testing.B) {
						d, err := mode.open(fix.ring)
						if errors.Is(err, libbpfdrain.ErrNoLibbpf) {
							b.Skip(err)
						}
						if err != nil {
							b.Fatal(err)
						}
						defer d.Close()
						fix.run(b, d, all)
					})
				}
			}
		})
	}
}

// fixture is one ring and its producer, shared by the modes of one size.
// The ring keeps its state between runs: records left by one run are
// drained by the next.
type fixture struct {
	ring     *ebpf.Map
	producer *progs.Producer
	size     int
	perFill  int    // records that fit in the ring
	inRing   int    // records produced and not yet drained
	nextSeq  uint64 // sequence number of the oldest of them
}

func newFixture(b *testing.B, size int) *fixture {
	b.Helper()
	ring, err := progs.NewRing(*benchRing)
	if errors.Is(err, unix.ENOMEM) {
		b.Skipf("kernel could not allocate a %d-byte ring: %v", *benchRing, err)
	}
	skipIfNoBPFBench(b, err)
	b.Cleanup(func() { ring.Close() })
	producer, err := progs.NewRingbufProducer(progs.RingbufSpec{
		Ring: ring, Size: size, Flags: progs.NoWakeup, Pattern: true,
	})
	skipIfNoBPFBench(b, err)
	b.Cleanup(func() { producer.Close() })
	return &fixture{
		ring:     ring,
		producer: producer,
		size:     size,
		perFill:  *benchRing / ((size+7)&^7 + 8),
	}
}

func skipIfNoBPFBench(b *testing.B, err error) {
	b.Helper()
	bpftest.SkipIfUnavailable(b, err, "BPF ring buffers")
}

// fill adds up to want records to an empty ring, untimed.
func (f *fixture) fill(b *testing.B, want int) {
	b.StopTimer()
	defer b.StartTimer()
	before, droppedBefore, err := f.producer.Counts()
	if err != nil {
		b.Fatal(err)
	}
	if err := f.producer.Run(min(want, f.perFill)); err != nil {
		b.Fatal(err)
	}
	after, dropped, err := f.producer.Counts()
	if err != nil {
		b.Fatal(err)
	}
	// A restarted test run may run more often than asked and overflow the
	// ring: the records that made it carry consecutive numbers from before.
	f.inRing = int((after - before) - (dropped - droppedBefore))
	f.nextSeq = before
}

// expectedSum is what touching n records from seq on must add up to, given
// that word i of record seq holds seq+i.
func (f *fixture) expectedSum(seq uint64, n int, all bool) uint64 {
	count := uint64(n)
	seqs := count*seq + count*(count-1)/2
	if !all {
		return seqs
	}
	words := uint64(f.size / 8)
	return words*seqs + count*words*(words-1)/2
}

func (f *fixture) run(b *testing.B, d drainer, all bool) {
	b.SetBytes(int64(f.size))
	b.ReportAllocs()
	b.ResetTimer()
	var sum, want uint64
	for left := b.N; left > 0; {
		if f.inRing == 0 {
			f.fill(b, left)
		}
		n := min(left, f.inRing)
		got, err := d.drain(n, all)
		if err != nil {
			b.Fatal(err)
		}
		sum += got
		want += f.expectedSum(f.nextSeq, n, all)
		f.inRing -= n
		f.nextSeq += uint64(n)
		left -= n
	}
	b.StopTimer()
	if sum != want {
		b.Fatalf("records touched add up to %d, want %d: a mode skipped or repeated records", sum, want)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
}

// upstream: cilium/ebpf's reader, ReadInto with a reused Record.
type upstreamDrainer struct {
	rd  *upstream.Reader
	rec upstream.Record
}

func openUpstream(m *ebpf.Map) (drainer, error) {
	rd, err := upstream.NewReader(m)
	if err != nil {
		return nil, err
	}
	// Upstream waits in epoll before it looks at the ring, and records
	// submitted with BPF_RB_NO_WAKEUP wake nobody. A deadline in the past
	// is upstream's documented way out: the wait gives up at once, the
	// reader reads what is there and reports the deadline after the last
	// record. That costs one epoll_wait per drain, not per record.
	rd.SetDeadline(time.Unix(1, 0))
	return &upstreamDrainer{rd: rd}, nil
}

func (d *upstreamDrainer) drain(n int, all bool) (sum uint64, err error) {
	expired := 0
	for got := 0; got < n; {
		err := d.rd.ReadInto(&d.rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The previous drain ended at the end of the ring; the next
			// call reads again. Twice in a row means the ring is empty.
			if expired++; expired > 1 {
				return 0, fmt.Errorf("upstream: ring empty after %d of %d records", got, n)
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		expired = 0
		sum += touch(d.rec.RawSample, all)
		got++
	}
	return sum, nil
}

func (d *upstreamDrainer) Close() error { return d.rd.Close() }

// copy: our ReadInto.
type copyDrainer struct {
	rd  *ringbuf.Reader
	rec ringbuf.Record
}

func openCopy(m *ebpf.Map) (drainer, error) {
	rd, err := ringbuf.NewReader(m)
	return &copyDrainer{rd: rd}, err
}

func (d *copyDrainer) drain(n int, all bool) (sum uint64, err error) {
	for range n {
		if err := d.rd.ReadInto(&d.rec); err != nil {
			return 0, err
		}
		sum += touch(d.rec.RawSample, all)
	}
	return sum, nil
}

func (d *copyDrainer) Close() error { return d.rd.Close() }

// peek: our PeekInto and Consume.
type peekDrainer struct {
	rd  *ringbuf.Reader
	rec ringbuf.Record
}

func openPeek(m *ebpf.Map) (drainer, error) {
	rd, err := ringbuf.NewReader(m)
	return &peekDrainer{rd: rd}, err
}

func (d *peekDrainer) drain(n int, all bool) (sum uint64, err error) {
	for range n {
		if err := d.rd.PeekInto(&d.rec); err != nil {
			return 0, err
		}
		sum += touch(d.rec.RawSample, all)
		if err := d.rd.Consume(); err != nil {
			return 0, err
		}
	}
	return sum, nil
}

func (d *peekDrainer) Close() error { return d.rd.Close() }

// records: our Records iterator.
type recordsDrainer struct {
	rd *ringbuf.Reader
}

func openRecords(m *ebpf.Map) (drainer, error) {
	rd, err := ringbuf.NewReader(m)
	return &recordsDrainer{rd: rd}, err
}

func (d *recordsDrainer) drain(n int, all bool) (sum uint64, err error) {
	got := 0
	for rec, err := range d.rd.Records() {
		if err != nil {
			return 0, err
		}
		sum += touch(rec.RawSample, all)
		if got++; got == n {
			break
		}
	}
	return sum, nil
}

func (d *recordsDrainer) Close() error { return d.rd.Close() }

// libbpf: the C peer, ring_buffer__consume with a C callback doing the
// same touch, one cgo call per drain.
type libbpfDrainer struct{ *libbpfdrain.Drainer }

func openLibbpf(m *ebpf.Map) (drainer, error) {
	d, err := libbpfdrain.Open(m)
	if err != nil {
		return nil, err
	}
	return libbpfDrainer{d}, nil
}

func (d libbpfDrainer) drain(n int, all bool) (uint64, error) { return d.Drain(n, all) }

// floor: no API at all, the fastest correct loop over the raw mapping we
// know (rawring.Floor): a local consumer position, one producer load and
// one consumer store per drain, a walk that stays in registers and, for
// touch=head, reads two records ahead of records of 256 bytes or more.
type floorDrainer struct {
	ring  *rawring.Ring
	floor *rawring.Floor
}

func openFloor(m *ebpf.Map) (drainer, error) {
	ring, err := rawring.Map(m)
	if err != nil {
		return nil, err
	}
	return &floorDrainer{ring: ring, floor: rawring.NewFloor(ring)}, nil
}

func (d *floorDrainer) drain(n int, all bool) (uint64, error) { return d.floor.Drain(n, all) }

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

func openLease(each bool) func(m *ebpf.Map) (drainer, error) {
	return func(m *ebpf.Map) (drainer, error) {
		ring, err := rawring.Map(m)
		if err != nil {
			return nil, err
		}
		return &leaseDrainer{ring: ring, rd: rawring.NewRawReader(ring), each: each}, nil
	}
}

func (d *leaseDrainer) drain(n int, all bool) (sum uint64, err error) {
	err = d.rd.WithLease(func(l rawring.Lease) error {
		defer l.Commit()
		for got := 0; got < n; {
			sample, remain, err := l.ReadSample()
			if err != nil {
				return fmt.Errorf("lease: after %d of %d records: %w", got, n, err)
			}
			if sample != nil { // nil: a discarded record
				sum += touch(sample, all)
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
