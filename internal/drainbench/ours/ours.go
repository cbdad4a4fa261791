//go:build linux

// Package ours holds the drain modes of github.com/ebpf-zc/ebpf/ringbuf for
// internal/drainbench: ReadInto (a copy, as upstream does), PeekInto with
// Consume, and the Records iterator. It is a package of its own so that a
// benchmark against a cilium/ebpf checkout our reader does not compile
// against can still run the upstream modes.
package ours

import (
	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/drainbench"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// Modes are our reader's modes, named as BenchmarkRead names them.
var Modes = []drainbench.Mode{
	{Name: "copy", Open: OpenCopy},
	{Name: "peek", Open: OpenPeek},
	{Name: "records", Open: OpenRecords},
	{Name: "batch", Open: OpenBatch},
}

// reader is what every mode holds: our Reader and its Close.
type reader struct {
	rd *ringbuf.Reader
}

// Close implements drainbench.Drainer.
func (r reader) Close() error { return r.rd.Close() }

// open opens our Reader on m and hands it to the mode's constructor.
func open(m *ebpf.Map, mode func(reader) drainbench.Drainer) (drainbench.Drainer, error) {
	rd, err := ringbuf.NewReader(m)
	if err != nil {
		return nil, err
	}
	return mode(reader{rd}), nil
}

// copyDrainer drains with our ReadInto.
type copyDrainer struct {
	reader
	rec ringbuf.Record
}

// OpenCopy opens our Reader on m for a ReadInto drain.
func OpenCopy(m *ebpf.Map) (drainbench.Drainer, error) {
	return open(m, func(r reader) drainbench.Drainer { return &copyDrainer{reader: r} })
}

// Drain implements drainbench.Drainer.
func (d *copyDrainer) Drain(n int, all bool) (sum uint64, err error) {
	for range n {
		if err := d.rd.ReadInto(&d.rec); err != nil {
			return 0, err
		}
		sum += drainbench.Touch(d.rec.RawSample, all)
	}
	return sum, nil
}

// peekDrainer drains with our PeekInto and Consume.
type peekDrainer struct {
	reader
	rec ringbuf.Record
}

// OpenPeek opens our Reader on m for a PeekInto and Consume drain.
func OpenPeek(m *ebpf.Map) (drainbench.Drainer, error) {
	return open(m, func(r reader) drainbench.Drainer { return &peekDrainer{reader: r} })
}

// Drain implements drainbench.Drainer.
func (d *peekDrainer) Drain(n int, all bool) (sum uint64, err error) {
	for range n {
		if err := d.rd.PeekInto(&d.rec); err != nil {
			return 0, err
		}
		sum += drainbench.Touch(d.rec.RawSample, all)
		if err := d.rd.Consume(); err != nil {
			return 0, err
		}
	}
	return sum, nil
}

// recordsDrainer drains with our Records iterator.
type recordsDrainer struct {
	reader
}

// OpenRecords opens our Reader on m for a Records drain.
func OpenRecords(m *ebpf.Map) (drainbench.Drainer, error) {
	return open(m, func(r reader) drainbench.Drainer { return &recordsDrainer{reader: r} })
}

// Drain implements drainbench.Drainer.
func (d *recordsDrainer) Drain(n int, all bool) (sum uint64, err error) {
	got := 0
	for rec, err := range d.rd.Records() {
		if err != nil {
			return 0, err
		}
		sum += drainbench.Touch(rec.RawSample, all)
		if got++; got == n {
			break
		}
	}
	return sum, nil
}

// batchDrainer drains with our Batches iterator and each batch's Samples.
type batchDrainer struct {
	reader
}

// OpenBatch opens our Reader on m for a Batches drain.
func OpenBatch(m *ebpf.Map) (drainbench.Drainer, error) {
	return open(m, func(r reader) drainbench.Drainer { return &batchDrainer{reader: r} })
}

// Drain implements drainbench.Drainer.
func (d *batchDrainer) Drain(n int, all bool) (sum uint64, err error) {
	got := 0
	for batch, err := range d.rd.Batches() {
		if err != nil {
			return 0, err
		}
		// Counted in locals of the batch's loop, which stay in registers,
		// as a loop body written for speed would.
		batchSum, batchGot := uint64(0), got
		for sample := range batch.Samples() {
			batchSum += drainbench.Touch(sample, all)
			if batchGot++; batchGot == n {
				break
			}
		}
		sum, got = sum+batchSum, batchGot
		if got == n {
			break
		}
	}
	return sum, nil
}
