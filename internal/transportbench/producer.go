//go:build linux

package transportbench

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"

	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/readloop"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// Helper is the BPF helper a producer sends its events with.
type Helper string

// The helpers compared.
const (
	PerfEventOutput Helper = "perf_event_output"
	RingbufOutput   Helper = "ringbuf_output"
	RingbufReserve  Helper = "ringbuf_reserve" // reserve, then submit
	MapPushElem     Helper = "map_push_elem"
)

// ProducerCase is one row of the producer benchmark: a helper and its
// flags.
type ProducerCase struct {
	Helper Helper
	// Flags names the flags as the row does: 0, no_wakeup, force_wakeup
	// for the ring buffer; current_cpu for perf, with the reader's
	// default wake-up (every event) or a watermark of half the buffer.
	Flags string

	ringFlags uint64
	watermark bool
	noReader  bool
}

// Refused reports whether the row's helper is meant to refuse every
// event, having no buffer to write to.
func (c ProducerCase) Refused() bool { return c.noReader }

// ProducerCases returns every row of the producer benchmark.
func ProducerCases() []ProducerCase {
	cases := []ProducerCase{
		{Helper: PerfEventOutput, Flags: "current_cpu"},
		{Helper: PerfEventOutput, Flags: "current_cpu_watermark", watermark: true},
		// No reader, so no buffer: the helper fails at once with ENOENT
		// and sends nothing. Not a transport, but what a benchmark that
		// forgot its reader measures.
		{Helper: PerfEventOutput, Flags: "current_cpu_no_reader", noReader: true},
	}
	for _, h := range []Helper{RingbufOutput, RingbufReserve} {
		cases = append(cases,
			ProducerCase{Helper: h, Flags: "0"},
			ProducerCase{Helper: h, Flags: "no_wakeup", ringFlags: progs.NoWakeup},
			ProducerCase{Helper: h, Flags: "force_wakeup", ringFlags: progs.ForceWakeup},
		)
	}
	return append(cases, ProducerCase{Helper: MapPushElem, Flags: "0"})
}

// BufferBytes is how much the producer benchmark's buffers hold: the ring
// buffer, each CPU's perf buffer, and about the queue.
const BufferBytes = 16 << 20

// maxChunk bounds the runs between two drains.
const maxChunk = 1 << 15

// ProducerRig is a producer with nobody reading its buffer, an empty
// program of the same type to subtract, and the means to empty the
// buffer between measurements.
type ProducerRig struct {
	// Producer writes one event per run.
	Producer *progs.Producer
	// Empty is a program of the producer's type that does nothing.
	Empty *ebpf.Program
	// Chunk is how many runs fit in the buffer with room to spare: run
	// at most that many between two calls to Drain.
	Chunk int

	size      int
	events    *ebpf.Map
	perf      *perf.Reader
	ring      *ringbuf.Reader
	drainer   *progs.QueueDrainer
	drained   uint64 // events taken out of the buffer so far
	perfLost  uint64
	malformed uint64
	refuseAll bool // every event is meant to fail: there is no buffer
}

// NewProducerRig builds the producer of case c for size-byte events, its
// buffer and what empties it.
func NewProducerRig(c ProducerCase, size int) (_ *ProducerRig, err error) {
	r := &ProducerRig{size: size}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	var perEvent int // bytes an event takes in the buffer, at most
	switch c.Helper {
	case PerfEventOutput:
		if r.events, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray}); err != nil {
			return nil, err
		}
		var opts perf.ReaderOptions
		if c.watermark {
			opts.Watermark = BufferBytes / 2
		}
		// The reader creates the per-CPU buffers the helper writes to.
		if !c.noReader {
			if r.perf, err = perf.NewReaderWithOptions(r.events, BufferBytes, opts); err != nil {
				return nil, fmt.Errorf("transportbench: perf reader: %w", err)
			}
		}
		r.refuseAll = c.noReader
		r.Producer, err = progs.NewPerfProducer(progs.PerfSpec{Events: r.events, Size: size})
		// A sample: perf_event_header (8 bytes), a u32 size, the data,
		// padded to 8 bytes (perf_output_sample, kernel/events/core.c).
		perEvent = (8 + 4 + size + 7) &^ 7
	case RingbufOutput, RingbufReserve:
		if r.events, err = progs.NewRing(BufferBytes); err != nil {
			return nil, fmt.Errorf("transportbench: ring buffer: %w", err)
		}
		if r.ring, err = ringbuf.NewReader(r.events); err != nil {
			return nil, err
		}
		method := progs.Output
		if c.Helper == RingbufReserve {
			method = progs.Reserve
		}
		r.Producer, err = progs.NewRingbufProducer(progs.RingbufSpec{
			Ring: r.events, Size: size, Method: method, Flags: c.ringFlags,
		})
		// BPF_RINGBUF_HDR_SZ (8) and the data, padded to 8 bytes.
		perEvent = (8 + size + 7) &^ 7
	case MapPushElem:
		entries := min(BufferBytes/size, 2*maxChunk)
		if r.events, err = progs.NewQueue(size, entries); err != nil {
			return nil, err
		}
		if r.drainer, err = progs.NewQueueDrainer(r.events); err != nil {
			return nil, err
		}
		r.Producer, err = progs.NewQueueProducer(progs.QueueSpec{Queue: r.events, Size: size})
		perEvent = BufferBytes / entries
	default:
		return nil, fmt.Errorf("transportbench: unknown helper %q", c.Helper)
	}
	if err != nil {
		return nil, err
	}
	if r.Empty, err = progs.NewEmptyProgram(r.Producer.Program.Type()); err != nil {
		return nil, err
	}
	// Half the buffer: test-run may run a program more often than asked
	// (see package progs), and the headroom keeps that from filling it.
	r.Chunk = min(maxChunk, BufferBytes/perEvent/2)
	return r, nil
}

// Produce runs the producer n times.
func (r *ProducerRig) Produce(n int) error { return r.Producer.Run(n) }

// RunEmpty runs the empty program n times.
func (r *ProducerRig) RunEmpty(n int) error { return progs.RunTimes(r.Empty, n) }

// Drain empties the buffer and checks that the buffer never filled:
// the program dropped nothing, the kernel lost nothing, and everything
// the program numbered came out. For the row without a buffer, it checks
// that the program dropped everything.
func (r *ProducerRig) Drain() error {
	count := func(b []byte) {
		if _, err := checkEvent(b, r.size, r.perf != nil); err != nil {
			r.malformed++
		}
		r.drained++
	}
	numbered, dropped, err := r.Producer.Counts()
	if err != nil {
		return err
	}
	if r.refuseAll {
		if dropped != numbered {
			return fmt.Errorf("transportbench: %d of %d events went somewhere with no buffer to go to", numbered-dropped, numbered)
		}
		return nil
	}
	switch {
	case r.perf != nil:
		if err := r.perf.Flush(); err != nil {
			return err
		}
		lost, err := readloop.Perf(r.perf, count)
		if err != nil {
			return err
		}
		r.perfLost += lost
	case r.ring != nil:
		if err := r.ring.Flush(); err != nil {
			return err
		}
		if err := readloop.Records(r.ring, count); err != nil {
			return err
		}
	case r.drainer != nil:
		n := numbered - dropped - r.drained
		if err := r.drainer.Drain(int(n)); err != nil {
			return err
		}
		r.drained += n
	}
	if dropped > 0 || r.perfLost > 0 {
		return fmt.Errorf("transportbench: the buffer filled: the program dropped %d events, perf lost %d", dropped, r.perfLost)
	}
	if r.malformed > 0 {
		return fmt.Errorf("transportbench: %d malformed events", r.malformed)
	}
	if r.drained != numbered {
		return fmt.Errorf("transportbench: %d events numbered, %d came out of the buffer", numbered, r.drained)
	}
	return nil
}

// checkEvent checks an event of size bytes and returns its sequence
// number. A perf sample arrives padded: the kernel rounds the raw data
// and its u32 length up to 8 bytes (perf_sample_save_raw_data in
// include/linux/perf_event.h, Linux 6.18), and the reader hands out the
// padded length.
func checkEvent(b []byte, size int, padded bool) (uint64, error) {
	if padded && len(b) >= size && len(b) < size+8 {
		b = b[:size]
	}
	return progs.CheckRecord(b, size, false)
}

// Close releases everything the rig made.
func (r *ProducerRig) Close() error {
	var errs []error
	if r.Producer != nil {
		errs = append(errs, r.Producer.Close())
	}
	if r.Empty != nil {
		errs = append(errs, r.Empty.Close())
	}
	if r.drainer != nil {
		errs = append(errs, r.drainer.Close())
	}
	if r.perf != nil {
		errs = append(errs, r.perf.Close())
	}
	if r.ring != nil {
		errs = append(errs, r.ring.Close())
	}
	if r.events != nil {
		errs = append(errs, r.events.Close())
	}
	return errors.Join(errs...)
}
