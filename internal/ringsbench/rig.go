//go:build linux

// Package ringsbench runs ring buffer producers on several CPUs at once,
// into one ring they share or into a ring per CPU, to measure what they
// cost each other: the producer side of BenchmarkRings.
//
// Each producer CPU has a goroutine locked to its thread and that thread
// pinned to the CPU; it runs the producer program in test-run loops
// (socket filters run on the calling thread's CPU, see progs.RunOnCPU).
// Between loops the rings are drained, with our ringbuf Reader, and every
// record is checked: delivered exactly once or counted as dropped.
package ringsbench

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/readloop"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// Layout is where the producers write.
type Layout string

// The layouts compared.
const (
	// Shared is one ring for every CPU, of Config.RingBytes.
	Shared Layout = "shared"
	// PerCPU is a ring per possible CPU in an array of maps, each of
	// Config.RingBytes divided by the CPUs (rounded down to a power of
	// two): the same memory as Shared on a machine of that many CPUs.
	PerCPU Layout = "percpu"
)

// Config is one measurement.
type Config struct {
	Layout Layout
	// Producers is how many CPUs produce at once: CPUs 0 to Producers-1.
	Producers int
	// Size is each record's length in bytes, at least 8.
	Size int
	// Flags go to bpf_ringbuf_submit: 0 or progs.NoWakeup.
	Flags uint64
	// RingBytes is the memory of all rings together.
	RingBytes int
}

// maxChunk bounds the runs per producer between two drains.
const maxChunk = 1 << 15

// Rig is a producer program, its rings, a reader per ring and a pinned
// goroutine per producer CPU.
type Rig struct {
	// Chunk is how many events each producer may place between two
	// drains with room to spare: pass at most that to Produce.
	Chunk int

	cfg      Config
	shared   *ebpf.Map
	set      *progs.RingSet
	producer *progs.Producer
	readers  []*ringbuf.Reader
	workers  []chan int // one per producer CPU: how many events to place
	results  chan runResult
	stopOnce sync.Once

	seen      []seqcheck.Tracker // per CPU: progs numbers each CPU's events apart
	malformed uint64
}

// runResult is what one producer's loop took.
type runResult struct {
	took time.Duration
	err  error
}

// New builds the rings, the producer and the pinned goroutines of cfg.
func New(cfg Config) (_ *Rig, err error) {
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	if cfg.Producers < 1 || cfg.Producers > cpus {
		return nil, fmt.Errorf("ringsbench: %d producers, want 1 to %d (the CPUs)", cfg.Producers, cpus)
	}
	r := &Rig{cfg: cfg, results: make(chan runResult, cfg.Producers), seen: make([]seqcheck.Tracker, cpus)}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	// Per-CPU numbering: one counter for all would be a cache line every
	// producer writes, contention of the benchmark's own making.
	spec := progs.RingbufSpec{Size: cfg.Size, Method: progs.Reserve, Flags: cfg.Flags, CPUSequence: true}
	perRing := cfg.RingBytes
	switch cfg.Layout {
	case Shared:
		if r.shared, err = progs.NewRing(cfg.RingBytes); err != nil {
			return nil, fmt.Errorf("ringsbench: ring of %d bytes: %w", cfg.RingBytes, err)
		}
		spec.Ring = r.shared
		r.readers = make([]*ringbuf.Reader, 1)
		if r.readers[0], err = ringbuf.NewReader(r.shared); err != nil {
			return nil, err
		}
	case PerCPU:
		perRing = floorPow2(cfg.RingBytes / cpus)
		sizes := make([]int, cpus)
		for i := range sizes {
			sizes[i] = perRing
		}
		if r.set, err = progs.NewRingSet(sizes); err != nil {
			return nil, err
		}
		spec.PerCPU = r.set.Outer
		r.readers = make([]*ringbuf.Reader, len(r.set.Rings))
		for i, ring := range r.set.Rings {
			if r.readers[i], err = ringbuf.NewReader(ring); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("ringsbench: unknown layout %q", cfg.Layout)
	}
	if r.producer, err = progs.NewRingbufProducer(spec); err != nil {
		return nil, err
	}
	// BPF_RINGBUF_HDR_SZ (8) and the data, padded to 8 bytes. The memory
	// a producer may fill is its share of the shared ring, or its own
	// ring; half of it leaves room for test-run's extra runs.
	perEvent := (8 + cfg.Size + 7) &^ 7
	share := perRing
	if cfg.Layout == Shared {
		share = cfg.RingBytes / cfg.Producers
	}
	r.Chunk = min(maxChunk, share/perEvent/2)
	if r.Chunk < 1 {
		return nil, fmt.Errorf("ringsbench: %d-byte rings hold no %d-byte records for %d producers", perRing, cfg.Size, cfg.Producers)
	}
	for cpu := range cfg.Producers {
		work := make(chan int)
		r.workers = append(r.workers, work)
		go r.produceOn(cpu, work)
	}
	return r, nil
}

// floorPow2 returns the largest power of two at most n (n > 0).
func floorPow2(n int) int {
	p := 1
	for p <= n/2 {
		p *= 2
	}
	return p
}

// produceOn runs on its own thread pinned to cpu, placing the events it
// is asked for, until work is closed.
func (r *Rig) produceOn(cpu int, work <-chan int) {
	unpin, err := cpustat.Pin(cpu)
	if err != nil {
		for range work {
			r.results <- runResult{err: err}
		}
		return
	}
	defer unpin()
	for n := range work {
		r.results <- r.timedRun(n)
	}
}

// timedRun runs the producer n times on the calling thread and returns
// the CPU time the thread spent: spinning on the ring's lock counts, time
// the scheduler gave the CPU to another process does not, so a loaded
// machine slows the measurement down but does not inflate it.
func (r *Rig) timedRun(n int) runResult {
	before, err := cpustat.ThreadClock()
	if err != nil {
		return runResult{err: err}
	}
	if err := r.producer.Run(n); err != nil {
		return runResult{err: err}
	}
	after, err := cpustat.ThreadClock()
	return runResult{took: after - before, err: err}
}

// Produce has every producer place n events at once, and returns the sum
// of the CPU time each producer's thread spent: its cost, spinning for
// the ring's lock included.
func (r *Rig) Produce(n int) (busy time.Duration, err error) {
	if n > r.Chunk {
		return 0, fmt.Errorf("ringsbench: %d events per producer, more than the %d the rings hold between drains", n, r.Chunk)
	}
	for _, w := range r.workers {
		w <- n
	}
	var errs []error
	for range r.workers {
		res := <-r.results
		busy += res.took
		errs = append(errs, res.err)
	}
	return busy, errors.Join(errs...)
}

// Drain empties every ring and checks each record: its size, that its
// sequence number had not arrived before, and with per-CPU rings that it
// is in the ring of the CPU that made it.
func (r *Rig) Drain() error {
	for ring, rd := range r.readers {
		if err := rd.Flush(); err != nil {
			return err
		}
		err := readloop.Records(rd, func(sample []byte) {
			seq, err := progs.CheckRecord(sample, r.cfg.Size, false)
			cpu, n := progs.CPUOf(seq)
			if err != nil || cpu >= len(r.seen) || (r.cfg.Layout == PerCPU && cpu != ring) || !r.seen[cpu].Add(n) {
				r.malformed++
			}
		})
		if err != nil {
			return err
		}
	}
	if r.malformed > 0 {
		return fmt.Errorf("ringsbench: %d records malformed, delivered twice or in another CPU's ring", r.malformed)
	}
	return nil
}

// Counts returns how many events the producers numbered, how many they
// could not place, and checks, after a Drain, that every other one was
// delivered exactly once.
func (r *Rig) Counts() (produced, dropped uint64, err error) {
	perCPU, err := r.producer.CPUCounts()
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for cpu, c := range perCPU {
		produced += c[0]
		dropped += c[1]
		if err := r.seen[cpu].Check(c[0], c[1]); err != nil {
			errs = append(errs, fmt.Errorf("ringsbench: CPU %d: %w", cpu, err))
		}
	}
	return produced, dropped, errors.Join(errs...)
}

// Close stops the producer goroutines and releases everything.
func (r *Rig) Close() error {
	r.stopOnce.Do(func() {
		for _, w := range r.workers {
			close(w)
		}
	})
	var errs []error
	for _, rd := range r.readers {
		if rd != nil {
			errs = append(errs, rd.Close())
		}
	}
	if r.producer != nil {
		errs = append(errs, r.producer.Close())
	}
	if r.set != nil {
		errs = append(errs, r.set.Close())
	}
	if r.shared != nil {
		errs = append(errs, r.shared.Close())
	}
	return errors.Join(errs...)
}
