//go:build linux

package drainbench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// A Drainer consumes exactly n records, touching each one with Touch, and
// returns the sum of what it touched. It fails rather than return early:
// fewer records than n in the ring is an error.
type Drainer interface {
	Drain(n int, all bool) (uint64, error)
	Close() error
}

// Mode is one way of draining a ring, named as it appears in the
// benchmark's name (mode=Name).
type Mode struct {
	Name string
	Open func(m *ebpf.Map) (Drainer, error)
}

// ErrModeUnavailable, wrapped in the error of a Mode's Open, says that this
// build lacks the mode (the libbpf peer without cgo): Run skips it and says
// why, where any other error fails the benchmark.
var ErrModeUnavailable = errors.New("mode not available in this build")

// Run drains rings that a test-run program filled: for each size a ring of
// ringBytes, then each mode with touch=head and touch=all in turn; an op
// is one record and the fill is not timed. The benchmarks are named
// size=S/mode=M/touch=T under b.
func Run(b *testing.B, ringBytes int, sizes []int, modes []Mode) {
	for _, size := range sizes {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			fix := NewFixture(b, ringBytes, size)
			for _, mode := range modes {
				for _, all := range []bool{false, true} {
					b.Run(fmt.Sprintf("mode=%s/touch=%s", mode.Name, TouchName(all)), func(b *testing.B) {
						d, err := mode.Open(fix.Ring)
						if errors.Is(err, ErrModeUnavailable) {
							b.Skip(err)
						}
						if err != nil {
							b.Fatalf("mode %s: %v", mode.Name, err)
						}
						defer d.Close()
						fix.Drain(b, d, all)
					})
				}
			}
		})
	}
}

// Fixture is one ring and its producer, shared by the modes of one size.
// The ring keeps its state between benchmarks: records one leaves behind
// are drained by the next.
type Fixture struct {
	// Ring is the BPF_MAP_TYPE_RINGBUF map the modes drain.
	Ring     *ebpf.Map
	producer *progs.Producer
	size     int
	perFill  int    // records that fit in the ring
	inRing   int    // records produced and not yet drained
	nextSeq  uint64 // sequence number of the oldest of them
}

// NewFixture creates a ring of ringBytes and a producer of size-byte
// records whose word i holds the record's sequence number plus i. It
// skips b where BPF ring buffers are not available and closes both when
// b ends.
func NewFixture(b *testing.B, ringBytes, size int) *Fixture {
	b.Helper()
	ring, err := progs.NewRing(ringBytes)
	if errors.Is(err, unix.ENOMEM) {
		b.Skipf("kernel could not allocate a %d-byte ring: %v", ringBytes, err)
	}
	bpftest.SkipIfUnavailable(b, err, "BPF ring buffers")
	b.Cleanup(func() { ring.Close() })
	producer, err := progs.NewRingbufProducer(progs.RingbufSpec{
		Ring: ring, Size: size, Flags: progs.NoWakeup, Pattern: true,
	})
	bpftest.SkipIfUnavailable(b, err, "BPF ring buffers")
	b.Cleanup(func() { producer.Close() })
	return &Fixture{
		Ring:     ring,
		producer: producer,
		size:     size,
		perFill:  ringBytes / ((size+7)&^7 + 8),
	}
}

// fill adds up to want records to an empty ring, untimed.
func (f *Fixture) fill(b *testing.B, want int) {
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
func (f *Fixture) expectedSum(seq uint64, n int, all bool) uint64 {
	count := uint64(n)
	seqs := count*seq + count*(count-1)/2
	if !all {
		return seqs
	}
	words := uint64(f.size / 8)
	return words*seqs + count*words*(words-1)/2
}

// Drain has d drain b.N records, refilling the ring whenever it is empty,
// fails b if the records touched do not add up to what the producer wrote,
// and reports Mrec/s beside ns/op.
func (f *Fixture) Drain(b *testing.B, d Drainer, all bool) {
	b.SetBytes(int64(f.size))
	b.ReportAllocs()
	b.ResetTimer()
	var sum, want uint64
	for left := b.N; left > 0; {
		if f.inRing == 0 {
			f.fill(b, left)
		}
		n := min(left, f.inRing)
		got, err := d.Drain(n, all)
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
