// Package ringmodel projects what a ring buffer producer pays per event
// on many CPUs from what it was measured to pay on one and on two.
//
// The model is Amdahl's law for a lock, in per-event form:
//
//	t(N) = t(1) + (N-1)·s,   s = t(2) - t(1)
//
// where t(N) is the time one producer spends per event while N producers,
// one per CPU, run flat out, and s is the serial part: the time each other
// producer's event keeps ours waiting. For a shared ring that is the
// ring's spinlock, which bpf_ringbuf_reserve takes around every
// reservation (rb->spin_lock in __bpf_ringbuf_reserve,
// kernel/bpf/ringbuf.c), held while it moves producer_pos, plus moving
// that lock's cache line from CPU to CPU. Together the N producers then
// place N/t(N) events per second, which approaches 1/s: the lock admits
// one reservation at a time however many CPUs wait.
//
// Assumptions, each of which the projection inherits:
//
//   - Producers run flat out, each on its own CPU, all the same program:
//     the lock is always wanted, so each event waits behind one event of
//     each other producer (the kernel's queued spinlock serves waiters in
//     order). A producer that does other work between events waits less.
//   - s, measured with two CPUs, stays the same with more. On this
//     two-CPU VM both share a socket; on a large machine a cache line
//     that crosses sockets costs more, so the projection is a lower bound
//     for the shared ring there.
//   - Nothing else is shared. Per-CPU rings have no common lock, and the
//     same fit gives them their own s: whatever else the producers share.
//     BenchmarkRings numbers events per CPU (progs.RingbufSpec's
//     CPUSequence), so that is memory bandwidth and the hypervisor, and
//     an s of zero, within noise, is the expected fit.
//   - t(2) below t(1) is noise, not a speed-up: s is then zero.
package ringmodel

import (
	"errors"
	"fmt"
	"math"
)

// Model is a fitted projection: the cost of an event alone and the
// serial part each other producer adds to it, in nanoseconds.
type Model struct {
	// Alone is t(1), ns per event with one producer.
	Alone float64
	// Serial is s, the ns each other producer adds to an event.
	Serial float64
}

// Fit returns the model through t(1) = alone and t(2) = two, both in ns
// per event per producer.
func Fit(alone, two float64) (Model, error) {
	for _, v := range []float64{alone, two} {
		if !(v > 0) || math.IsInf(v, 0) {
			return Model{}, fmt.Errorf("ringmodel: ns per event must be positive and finite, got t(1)=%g, t(2)=%g", alone, two)
		}
	}
	return Model{Alone: alone, Serial: max(0, two-alone)}, nil
}

// ErrProducers says a projection was asked for fewer than one producer.
var ErrProducers = errors.New("ringmodel: producers must be at least 1")

// PerEvent returns t(n), ns one producer spends per event while n run.
func (m Model) PerEvent(n int) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("%w, got %d", ErrProducers, n)
	}
	return m.Alone + float64(n-1)*m.Serial, nil
}

// EventsPerSecond returns how many events n producers place together per
// second: n / t(n).
func (m Model) EventsPerSecond(n int) (float64, error) {
	t, err := m.PerEvent(n)
	if err != nil {
		return 0, err
	}
	return float64(n) / t * 1e9, nil
}

// Ceiling returns the events per second no number of producers exceeds,
// 1/s, or +Inf when nothing is serial.
func (m Model) Ceiling() float64 {
	if m.Serial == 0 {
		return math.Inf(1)
	}
	return 1e9 / m.Serial
}
