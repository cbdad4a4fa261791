//go:build linux

package transportbench

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/readloop"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// Transport is the map events travel through.
type Transport string

// The transports compared.
const (
	Perf    Transport = "perf"
	Ringbuf Transport = "ringbuf"
	Queue   Transport = "queue"
)

// Reader is how user space takes events out of the transport.
type Reader string

// The readers compared.
const (
	// PerfReadInto is cilium/ebpf's perf.Reader with ReadInto, waking on
	// every event (its default watermark of one byte).
	PerfReadInto Reader = "perf-readinto"
	// Records ranges over our ringbuf Reader's Records, zero-copy.
	Records Reader = "records"
	// ReadInto is our ringbuf Reader's ReadInto, which copies.
	ReadInto Reader = "readinto"
	// UpstreamReadInto is cilium/ebpf's ringbuf.Reader with ReadInto.
	UpstreamReadInto Reader = "upstream-readinto"
	// LookupAndDelete pops one value per system call, polling: a queue
	// map wakes nobody.
	LookupAndDelete Reader = "lookup-delete"
	// BatchLookupAndDelete pops many values per system call, where the
	// kernel supports batch operations on queue maps.
	BatchLookupAndDelete Reader = "batch-lookup-delete"
)

// Case is one row of the end-to-end benchmark.
type Case struct {
	Transport Transport
	Reader    Reader
}

// EndToEndCases returns every row of the end-to-end benchmark. The ring
// buffer producer reserves and submits with flags 0, so the kernel wakes
// the reader when it has caught up; perf wakes it on every event, or
// every PerfWatermark bytes in the -wm rows (perf.go); a queue wakes
// nobody.
func EndToEndCases() []Case {
	return append(append([]Case{{Perf, PerfReadInto}}, perfCases()...), []Case{
		{Ringbuf, Records},
		{Ringbuf, ReadInto},
		{Ringbuf, UpstreamReadInto},
		{Queue, LookupAndDelete},
		{Queue, BatchLookupAndDelete},
	}...)
}

// ErrNoQueueBatch says the kernel has no batch operations for queue maps.
var ErrNoQueueBatch = errors.New("kernel has no batch lookup-and-delete for queue maps")

// Config is one end-to-end measurement.
type Config struct {
	Case Case
	// Size is each event's length in bytes, at least 8.
	Size int
	// Duration is how long the producer runs.
	Duration time.Duration
	// Rate paces the producer to this many events per second, in bursts
	// every millisecond; 0 runs it flat out.
	Rate int
	// ProducerCPU and ConsumerCPU pin the two sides; -1 means CPU 0 for
	// the producer and the last CPU for the consumer.
	ProducerCPU, ConsumerCPU int
	// RingSize is the ring buffer's size in bytes; perf gets as much in
	// all, split over the possible CPUs. 0 means 4 MiB.
	RingSize int
	// QueueEntries is the queue's length; 0 means 65536.
	QueueEntries int
	// Pattern fills and checks every byte of each event, not just its
	// sequence number.
	Pattern bool
}

// loopRuns is how many times the producer runs per test-run call.
const loopRuns = 4096

// Result is what one end-to-end run measured.
type Result struct {
	// Elapsed is how long the producer ran.
	Elapsed time.Duration
	// LastBurst is when the producer's last test-run call started, from
	// its start. A paced producer had then sent every burst due by the
	// millisecond that call began in, so Rate × LastBurst is what the
	// pace owes, counted against the time the producer really got to run:
	// a thread that a slow or busy CPU held back owes nothing for the
	// wait that nobody let it send in.
	LastBurst time.Duration
	// Produced counts the events the program numbered; Dropped those it
	// could not hand over (buffer or queue full).
	Produced, Dropped uint64
	// PerfLost counts the samples perf's reader reported lost.
	PerfLost uint64
	// Delivered counts the distinct events the consumer read; Malformed
	// those that failed their check.
	Delivered, Malformed uint64
	// Consumer is the consumer thread's CPU time over ConsumerWall.
	Consumer     cpustat.Usage
	ConsumerWall time.Duration
	// SeqErr is non-nil if an event arrived twice, or neither arrived nor
	// was counted as dropped.
	SeqErr error
}

// Run measures one row: it builds the transport and its producer, starts
// the consumer on its own pinned thread, runs the producer on another for
// cfg.Duration, stops the consumer once it has drained, and checks every
// event.
func Run(cfg Config) (_ *Result, err error) {
	cfg.fill()
	// The producer and the consumer each hold a thread running Go code.
	if runtime.GOMAXPROCS(0) < 3 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	}
	t, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()

	res := &Result{}
	var seen seqcheck.Tracker
	handle := func(b []byte) {
		seq, err := checkEvent(b, cfg.Size, cfg.Case.Transport == Perf)
		if err != nil {
			res.Malformed++
			return
		}
		seen.Add(seq)
	}
	wait, err := cpustat.Go(cfg.ConsumerCPU, func() error { return t.consume(handle) })
	if err != nil {
		return nil, err
	}
	res.Elapsed, res.LastBurst, err = produce(t.producer.Run, cfg.ProducerCPU, cfg.Duration, cfg.Rate)
	t.stop()
	var consErr error
	res.Consumer, res.ConsumerWall, consErr = wait()
	if err := errors.Join(err, consErr); err != nil {
		return nil, err
	}
	if res.Produced, res.Dropped, err = t.producer.Counts(); err != nil {
		return nil, err
	}
	res.PerfLost = t.perfLost
	res.Delivered = seen.Delivered()
	res.SeqErr = seen.Check(res.Produced, res.Dropped)
	return res, nil
}

func (c *Config) fill() {
	cpus := runtime.NumCPU()
	if c.ProducerCPU < 0 {
		c.ProducerCPU = 0
	}
	if c.ConsumerCPU < 0 {
		c.ConsumerCPU = cpus - 1
	}
	c.ProducerCPU %= cpus
	c.ConsumerCPU %= cpus
	if c.RingSize == 0 {
		c.RingSize = 4 << 20
	}
	if c.QueueEntries == 0 {
		c.QueueEntries = 1 << 16
	}
}

// produce calls run, a producer's Run, on a thread pinned to cpu until d has
// passed, and returns how long it ran and when its last call started:
// flat out, loopRuns runs per test-run call, or with rate, a burst of
// rate/1000 runs every millisecond. A paced producer that falls behind
// (a test-run call slower than a millisecond: 2 ms under TCG) makes up
// the bursts it missed in its next call, so whenever it calls run it has
// sent every burst due by then; how many that is over d depends on how
// often the CPU let it call.
func produce(run func(runs int) error, cpu int, d time.Duration, rate int) (elapsed, lastBurst time.Duration, err error) {
	wait, err := cpustat.Go(cpu, func() error {
		perTick := max(rate/1000, 1)
		start := time.Now()
		for sent := 0; ; {
			now := time.Since(start)
			if now >= d {
				return nil
			}
			lastBurst = now
			runs := loopRuns
			if rate > 0 {
				ticks := int(now/time.Millisecond) + 1 // the current one included
				runs = ticks*perTick - sent
			}
			// Paced, runs is at least perTick: the sleep below ends past
			// the tick that sent covers.
			if err := run(runs); err != nil {
				return err
			}
			sent += runs
			if rate > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(sent/perTick) * time.Millisecond)))
			}
		}
	})
	if err != nil {
		return 0, 0, err
	}
	_, elapsed, err = wait()
	return elapsed, lastBurst, err
}

// transport is a map, its producer, and the consumer loop that drains it.
type transport struct {
	events   *ebpf.Map
	producer *progs.Producer
	consume  func(handle func([]byte)) error
	stop     func()
	closers  []func() error
	perfLost uint64
}

func newTransport(cfg Config) (_ *transport, err error) {
	t := &transport{}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	switch cfg.Case.Transport {
	case Perf:
		if t.events, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray}); err != nil {
			return nil, err
		}
		if err := t.perfReader(cfg); err != nil {
			return nil, err
		}
		t.producer, err = progs.NewPerfProducer(progs.PerfSpec{Events: t.events, Size: cfg.Size, Pattern: cfg.Pattern})
	case Ringbuf:
		if t.events, err = progs.NewRing(cfg.RingSize); err != nil {
			return nil, fmt.Errorf("transportbench: ring buffer: %w", err)
		}
		if err := t.ringbufReader(cfg.Case.Reader); err != nil {
			return nil, err
		}
		t.producer, err = progs.NewRingbufProducer(progs.RingbufSpec{
			Ring: t.events, Size: cfg.Size, Method: progs.Reserve, Pattern: cfg.Pattern,
		})
	case Queue:
		if t.events, err = progs.NewQueue(cfg.Size, cfg.QueueEntries); err != nil {
			return nil, err
		}
		if err := t.queueReader(cfg); err != nil {
			return nil, err
		}
		t.producer, err = progs.NewQueueProducer(progs.QueueSpec{Queue: t.events, Size: cfg.Size, Pattern: cfg.Pattern})
	default:
		return nil, fmt.Errorf("transportbench: unknown transport %q", cfg.Case.Transport)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (t *transport) ringbufReader(r Reader) error {
	if r == UpstreamReadInto {
		rd, err := upstream.NewReader(t.events)
		if err != nil {
			return fmt.Errorf("transportbench: upstream ring buffer reader: %w", err)
		}
		t.closers = append(t.closers, rd.Close)
		t.consume = func(handle func([]byte)) error { return readloop.Upstream(rd, handle) }
		t.stop = func() { rd.Flush() }
		return nil
	}
	rd, err := ringbuf.NewReader(t.events)
	if err != nil {
		return err
	}
	t.closers = append(t.closers, rd.Close)
	t.stop = func() { rd.Flush() }
	switch r {
	case Records:
		t.consume = func(handle func([]byte)) error { return readloop.Records(rd, handle) }
	case ReadInto:
		t.consume = func(handle func([]byte)) error { return readloop.ReadInto(rd, handle) }
	default:
		return fmt.Errorf("transportbench: %s cannot read a ring buffer", r)
	}
	return nil
}

func (t *transport) queueReader(cfg Config) error {
	var stopped atomic.Bool
	t.stop = func() { stopped.Store(true) }
	switch cfg.Case.Reader {
	case LookupAndDelete:
		t.consume = func(handle func([]byte)) error {
			value := make([]byte, cfg.Size)
			for {
				// Read the flag first, so the pass after the stop
				// empties the queue.
				last := stopped.Load()
				for {
					err := t.events.LookupAndDelete(nil, value)
					if errors.Is(err, ebpf.ErrKeyNotExist) {
						break
					}
					if err != nil {
						return err
					}
					handle(value)
				}
				if last {
					return nil
				}
			}
		}
	case BatchLookupAndDelete:
		if err := HaveQueueBatch(); err != nil {
			return err
		}
		return fmt.Errorf("transportbench: batch reads of queue maps are not written yet")
	default:
		return fmt.Errorf("transportbench: %s cannot read a queue", cfg.Case.Reader)
	}
	return nil
}

// HaveQueueBatch reports whether the kernel offers batch lookup and
// delete on queue maps, with an error wrapping ErrNoQueueBatch if not.
// Linux 6.18's queue_map_ops (kernel/bpf/queue_stack_maps.c) set no
// map_lookup_and_delete_batch, so the system call fails with EINVAL
// (cilium/ebpf may report it as ebpf.ErrNotSupported).
func HaveQueueBatch() error {
	q, err := progs.NewQueue(8, 4)
	if err != nil {
		return err
	}
	defer q.Close()
	if err := q.Put(nil, uint64(1)); err != nil {
		return err
	}
	var cursor ebpf.MapBatchCursor
	values := make([]uint64, 4)
	_, err = q.BatchLookupAndDelete(&cursor, make([]struct{}, len(values)), values, nil)
	if err == nil || errors.Is(err, ebpf.ErrKeyNotExist) {
		return nil
	}
	return fmt.Errorf("%w (%v)", ErrNoQueueBatch, err)
}

func (t *transport) close() error {
	var errs []error
	if t.producer != nil {
		errs = append(errs, t.producer.Close())
	}
	for _, c := range t.closers {
		errs = append(errs, c())
	}
	if t.events != nil {
		errs = append(errs, t.events.Close())
	}
	return errors.Join(errs...)
}

// Metric is one number a row reports, in its unit.
type Metric struct {
	Value float64
	Unit  string
}

// Metrics returns what a benchmark row reports: events delivered per
// second, events lost in percent of those produced, the consumer's user
// and system CPU in milliseconds per second, and its CPU per million
// delivered events.
func (r *Result) Metrics() []Metric {
	perSecond := func(n uint64) float64 {
		if r.Elapsed <= 0 {
			return 0
		}
		return float64(n) / r.Elapsed.Seconds()
	}
	lost, perMillion := 0.0, 0.0
	if r.Produced > 0 {
		lost = 100 * float64(r.Dropped) / float64(r.Produced)
	}
	if r.Delivered > 0 {
		perMillion = float64(r.Consumer.Total()) / float64(time.Millisecond) / float64(r.Delivered) * 1e6
	}
	return []Metric{
		{perSecond(r.Delivered), "events/s"},
		{perSecond(r.Produced), "produced/s"},
		{lost, "lost-%"},
		{cpustat.PerSecond(r.Consumer.User, r.ConsumerWall), "cons-user-ms/s"},
		{cpustat.PerSecond(r.Consumer.System, r.ConsumerWall), "cons-sys-ms/s"},
		{perMillion, "cons-ms/Mevent"},
	}
}
