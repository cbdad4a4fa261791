//go:build linux

package perfdrain

import (
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/perf"

	"github.com/ebpf-zc/ebpf/internal/drainloop"
	"github.com/ebpf-zc/ebpf/perf"
)

// Modes are the drain benchmark's readers: cilium/ebpf v0.22's ReadInto,
// ours, our Records iterator and our Batches iterator.
var Modes = []Mode{
	{Name: "upstream", Open: OpenUpstream},
	{Name: "copy", Open: OpenCopy},
	{Name: "records", Open: OpenRecords},
	{Name: "batch", Open: OpenBatch},
}

// past is the deadline every mode's reader gets: a wait gives up at once,
// so a drain reads what is in the buffers and never sleeps.
var past = time.Unix(1, 0)

// upstreamDrainer drains with cilium/ebpf's perf.Reader, ReadInto into a
// reused Record.
type upstreamDrainer struct {
	rd  *upstream.Reader
	rec upstream.Record
}

// OpenUpstream opens cilium/ebpf's perf.Reader for a ReadInto drain.
func OpenUpstream(array *ebpf.Map, perCPUBuffer, watermark int) (drainloop.Drainer, error) {
	rd, err := upstream.NewReaderWithOptions(array, perCPUBuffer, upstream.ReaderOptions{Watermark: watermark})
	if err != nil {
		return nil, err
	}
	// v0.22's Reader looks at the buffers only after a wait: with the
	// deadline in the past the wait gives up at once, it reads every
	// buffer, and reports the deadline after the last record. That is one
	// epoll_wait a drain, not a record.
	rd.SetDeadline(past)
	return &upstreamDrainer{rd: rd}, nil
}

// Drain implements drainloop.Drainer.
func (d *upstreamDrainer) Drain(n int, all bool) (sum uint64, err error) {
	deadlines := 0
	for got := 0; got < n; {
		err := d.rd.ReadInto(&d.rec)
		if expired(err) {
			// Twice in a row: the buffers are empty.
			if deadlines++; deadlines > 1 {
				return 0, errEmpty("upstream", got, n)
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		deadlines = 0
		if d.rec.LostSamples > 0 {
			continue
		}
		sum += drainloop.Touch(d.rec.RawSample, all)
		got++
	}
	return sum, nil
}

// Close implements drainloop.Drainer.
func (d *upstreamDrainer) Close() error { return d.rd.Close() }

// open opens our Reader as every mode of ours does.
func open(array *ebpf.Map, perCPUBuffer, watermark int) (*perf.Reader, error) {
	rd, err := perf.NewReaderWithOptions(array, perCPUBuffer, perf.ReaderOptions{Watermark: watermark})
	if err != nil {
		return nil, err
	}
	rd.SetDeadline(past)
	return rd, nil
}

// copyDrainer drains with our ReadInto.
type copyDrainer struct {
	rd  *perf.Reader
	rec perf.Record
}

// OpenCopy opens our Reader for a ReadInto drain.
func OpenCopy(array *ebpf.Map, perCPUBuffer, watermark int) (drainloop.Drainer, error) {
	rd, err := open(array, perCPUBuffer, watermark)
	if err != nil {
		return nil, err
	}
	return &copyDrainer{rd: rd}, nil
}

// Drain implements drainloop.Drainer.
func (d *copyDrainer) Drain(n int, all bool) (sum uint64, err error) {
	for got := 0; got < n; {
		if err := d.rd.ReadInto(&d.rec); err != nil {
			if expired(err) {
				return 0, errEmpty("copy", got, n)
			}
			return 0, err
		}
		if d.rec.LostSamples > 0 {
			continue
		}
		sum += drainloop.Touch(d.rec.RawSample, all)
		got++
	}
	return sum, nil
}

// Close implements drainloop.Drainer.
func (d *copyDrainer) Close() error { return d.rd.Close() }

// recordsDrainer drains with our Records iterator, one loop a drain.
type recordsDrainer struct {
	rd *perf.Reader
}

// OpenRecords opens our Reader for a Records drain.
func OpenRecords(array *ebpf.Map, perCPUBuffer, watermark int) (drainloop.Drainer, error) {
	rd, err := open(array, perCPUBuffer, watermark)
	if err != nil {
		return nil, err
	}
	return recordsDrainer{rd: rd}, nil
}

// Drain implements drainloop.Drainer.
func (d recordsDrainer) Drain(n int, all bool) (sum uint64, err error) {
	got := 0
	for rec, err := range d.rd.Records() {
		if err != nil {
			if expired(err) {
				return 0, errEmpty("records", got, n)
			}
			return 0, err
		}
		if rec.LostSamples > 0 {
			continue
		}
		sum += drainloop.Touch(rec.RawSample, all)
		if got++; got == n {
			break
		}
	}
	return sum, nil
}

// Close implements drainloop.Drainer.
func (d recordsDrainer) Close() error { return d.rd.Close() }

// batchDrainer drains with our Batches iterator and each batch's Samples,
// one loop a drain.
type batchDrainer struct {
	rd *perf.Reader
}

// OpenBatch opens our Reader for a Batches drain.
func OpenBatch(array *ebpf.Map, perCPUBuffer, watermark int) (drainloop.Drainer, error) {
	rd, err := open(array, perCPUBuffer, watermark)
	if err != nil {
		return nil, err
	}
	return batchDrainer{rd: rd}, nil
}

// Drain implements drainloop.Drainer. A record of lost samples is
// counted by the batch, not yielded, so it needs no test in the loop.
func (d batchDrainer) Drain(n int, all bool) (sum uint64, err error) {
	got := 0
	for batch, err := range d.rd.Batches() {
		if err != nil {
			if expired(err) {
				return 0, errEmpty("batch", got, n)
			}
			return 0, err
		}
		// Counted in locals of the batch's loop, which stay in registers,
		// as a loop body written for speed would (ringbuf's batch mode).
		batchSum, batchGot := uint64(0), got
		for sample := range batch.Samples() {
			batchSum += drainloop.Touch(sample, all)
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

// Close implements drainloop.Drainer.
func (d batchDrainer) Close() error { return d.rd.Close() }
