package ringbuf

import (
	"iter"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// Batch is a run of records of one ring claimed by a loop of [Reader.Batches]: at
// most min(size/8, 256 KiB) and the record crossing it. It belongs to the
// loop's body; once the loop has ended, its [Batch.Samples] yield nothing.
type Batch struct {
	ring     *ring
	index    int // the ring's consumer in rings
	key      int // Record.Ring of the ring
	claim    claim
	pos      uint64 // records below are consumed
	limit    uint64 // the walk ends at the first record boundary from here
	producer uint64 // producer position when claimed
	holding  bool
	ahead    uint32 // what the look-ahead loads read, kept so that they stay
}

// Ring is where the batch's records come from, as [Record.Ring].
func (b *Batch) Ring() int { return b.key }

// Samples returns an iterator over the batch's samples, read-only views
// of the ring valid until the Batches loop's body returns. A sample is
// consumed once handed out; those not reached go back to the reader.
func (b *Batch) Samples() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !b.holding {
			return // the loop ended: its records went back, its ring may be unmapped
		}
		area := b.ring.dataArea // in registers: the stores to b.pos cannot change it
		p, limit, end := b.pos, b.limit, b.claim.End
		var ahead uint32
		for p < limit {
			h := area.headerAt(p)
			total := h.total()
			if h.busy() || total > end-p {
				break // a producer is still writing it, or corrupt: the loop's end tells which
			}
			ahead |= area.loadAhead(p, total)
			next := p + total
			if !h.discarded() {
				b.pos = next
				if !yield(area.sample(p, h.length())) {
					return
				}
			}
			p = next
		}
		b.pos, b.ahead = p, ahead
	}
}

// loadAhead loads the word aheadRecords records on from the record at
// pos, guessing they are all total bytes long, and returns it for the
// caller to keep (an unused load is compiled away): it starts the miss of
// a record the walk will reach while the body works. aheadRecords was
// chosen by testdata/ringbuf/intel-xeon/walk-ahead (docs/batch-walk.md,
// "Two records ahead").
func (a dataArea) loadAhead(pos, total uint64) uint32 {
	return *(*uint32)(unsafe.Add(a.data, (pos+aheadRecords*total)&a.mask))
}

const aheadRecords = 2

// records is the loop of Batches, with a Record for each sample.
func (rs *rings) records(yield func(*Record, error) bool) {
	var rec Record
	for b, err := range rs.batches {
		if err != nil {
			yield(nil, err)
			return
		}
		rec.Ring = b.key
		for sample := range b.Samples() {
			rec.RawSample = sample
			rec.Remaining = int(b.producer - b.pos)
			if !yield(&rec, nil) {
				return
			}
		}
	}
}

func (rs *rings) batches(yield func(*Batch, error) bool) {
	l := &batchLoop{rings: rs}
	rs.engine.Loop(l, func(err error) bool {
		if err != nil {
			return yield(nil, err)
		}
		return yield(&l.Batch, nil)
	})
}

// batchLoop is a loop's Batch as readers.Engine.Loop holds it.
type batchLoop struct {
	rings *rings
	Batch
}

// Claim claims a batch of ring i.
func (l *batchLoop) Claim(i int, alone bool) (readers.Take, error) {
	rs, c := l.rings, &l.rings.consumers[i]
	if c.err != nil {
		return readers.None, rs.ringErr(i, c.err)
	}
	cl, ok, busy := c.claimBatch(alone)
	switch {
	case c.err != nil:
		return readers.None, rs.ringErr(i, c.err)
	case busy:
		return readers.Busy, nil
	case !ok:
		return readers.None, nil
	}
	l.Batch = Batch{
		ring:     c.ring,
		index:    i,
		claim:    cl,
		pos:      cl.Start,
		limit:    min(cl.End, cl.Start+c.batchBytes),
		producer: c.producerPos,
		holding:  true,
	}
	if rs.keys != nil {
		l.key = rs.keys[i]
	}
	return readers.Held, nil
}

// Release gives back the loop's batch, if it holds one: what the walk did
// not reach goes back. A walk that stopped at a corrupt record leaves the
// ring's error; one that read nothing before a busy record is stalled.
func (l *batchLoop) Release(bool) (i, ended int, stalled bool) {
	if !l.holding {
		return 0, 0, false
	}
	b := &l.Batch
	c := &l.rings.consumers[b.index]
	b.holding = false
	if b.pos < b.limit {
		switch h := c.ring.headerAt(b.pos); {
		case h.busy():
			stalled = b.pos == b.claim.Start
		case h.total() > b.claim.End-b.pos && c.err == nil:
			c.err = c.ring.corrupt(b.pos, b.claim.End, h)
		}
	}
	c.claims.Release(b.claim, b.pos)
	return b.index, 1, stalled
}
