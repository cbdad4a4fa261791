//go:build linux

package drainbench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/drainloop"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

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
					b.Run(fmt.Sprintf("mode=%s/touch=%s", mode.Name, drainloop.TouchName(all)), func(b *testing.B) {
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

// refill hands drainloop.Run the records a mode before left in the ring, or else
// fills the empty ring with up to want records.
func (f *Fixture) refill(b *testing.B, want int) (placed int, firstSeq uint64) {
	if f.inRing > 0 {
		placed, f.inRing = f.inRing, 0
		return placed, f.nextSeq
	}
	placed, firstSeq, err := f.producer.Fill(min(want, f.perFill))
	if err != nil {
		b.Fatal(err)
	}
	return placed, firstSeq
}

// Drain has d drain b.N records, refilling the ring whenever it is empty,
// fails b if the records touched do not add up to what the producer wrote,
// and reports Mrec/s beside ns/op (drainloop.Run). Records left in the
// ring are drained by the next mode.
func (f *Fixture) Drain(b *testing.B, d Drainer, all bool) {
	f.inRing, f.nextSeq = drainloop.Run(b, d, all, f.size, f.refill)
}
