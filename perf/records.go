package perf

import "iter"

// Records returns an iterator over the records of every CPU's buffer,
// consumed in place, with ringbuf.Reader.Records' contract. rec.RawSample
// is valid until the body returns (a copy in the loop's memory if it
// wraps around the buffer's end). Lost samples come with LostSamples set;
// an unknown type as an error that does not end the loop (IsUnknownEvent).
// A CPU's records come in the kernel's order, different CPUs' in none.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	return r.records
}

// records is the engine's batch loop, with a Record for each sample.
func (e *engine) records(yield func(*Record, error) bool) {
	var (
		rec     Record
		scratch []byte // a sample that wraps around a buffer's end
	)
	l := &batchLoop{e: e}
	e.core.Loop(l, func(err error) bool {
		if err != nil {
			return yield(nil, err)
		}
		rec.CPU = e.consumers[l.cpu].cpu
		return e.yieldBatch(&l.batch, &rec, &scratch, yield)
	})
}

// batch is a loop's claim on one CPU's buffer, read outside the mutex.
type batch struct {
	cpu     int // index in engine.consumers
	claim   claim
	pos     uint64 // records below are consumed
	limit   uint64 // the walk ends at the first record boundary from here
	bias    uint64 // the consumer's, when claimed
	head    uint64 // the consumer's head, when claimed
	holding bool
	err     error // the walk stopped at a corrupt record
}

// yieldBatch yields b's records from b.pos on, and reports whether the
// loop body asked for more. It stops at b.limit and at a corrupt record
// (in b.err). The hot loop: one header load a record, a size load a
// sample; the checks keep every read inside the claim even if the buffer
// changes under us.
func (e *engine) yieldBatch(b *batch, rec *Record, scratch *[]byte, yield func(*Record, error) bool) bool {
	c := &e.consumers[b.cpu]
	buf, overwrite := c.buf, c.overwrite
	p, limit, end, bias := b.pos, b.limit, b.claim.End, b.bias
	for p < limit {
		h := buf.headerAt(p - bias)
		size := uint64(h.size)
		if size < sampleHeaderSize || size%recordAlign != 0 || size > end-p || h.typ != recordSample {
			// Rare: lost samples, an unknown type, a bad or cut record.
			more, next, ok := e.yieldOther(b, rec, p, end, yield)
			if !ok {
				return more
			}
			p = next
			continue
		}
		length := buf.u32At(p - bias + headerSize)
		if uint64(length) > size-sampleHeaderSize {
			_, err := buf.parse(p-bias, end-p)
			b.err = c.cpuErr(err)
			break
		}
		next := p + size
		rec.RawSample = buf.view(p-bias+sampleHeaderSize, length, scratch)
		rec.LostSamples = 0
		rec.Remaining = int(b.head - next)
		if overwrite {
			rec.Remaining = -1
		}
		b.pos = next // consumed once handed out, whatever the body does
		if !yield(rec, nil) {
			return false
		}
		p = next
	}
	b.pos = p
	return true
}

// yieldOther handles a record at p that is not a well-formed sample: ok
// false stops the walk (more: the body asked for more), else next is past
// the record.
func (e *engine) yieldOther(b *batch, rec *Record, p, end uint64, yield func(*Record, error) bool) (more bool, next uint64, ok bool) {
	c := &e.consumers[b.cpu]
	got, err := c.buf.parse(p-b.bias, end-p)
	switch {
	case err != nil && c.overwrite:
		// Cut short by the wrap (abi.go): the window ends before it.
		b.pos = end
		return true, 0, false
	case err != nil:
		b.pos, b.err = p, c.cpuErr(err)
		return true, 0, false
	}
	next = p + got.size
	b.pos = next
	if got.typ != recordLost {
		return yield(nil, &unknownEventError{got.typ}), next, true
	}
	rec.RawSample, rec.LostSamples, rec.Remaining = nil, got.lost, int(b.head-next)
	if c.overwrite {
		rec.Remaining = -1
	}
	if !yield(rec, nil) {
		return false, 0, false
	}
	return true, next, true
}

// batchLoop is a loop's batch, a readers.Batcher.
type batchLoop struct {
	e *engine
	batch
}

// Claim claims a batch, CPUs taking turns.
func (l *batchLoop) Claim() (ok, busy bool, err error) {
	e := l.e
	if err := e.checkPausedLocked(); err != nil {
		return false, false, err
	}
	return e.core.ClaimTurnLocked(true, func(i int, alone bool) (ok, busy bool, err error) {
		c := &e.consumers[i]
		var cl claim
		if c.err == nil {
			cl, ok = c.claimBatch(alone)
		}
		if c.err != nil || !ok {
			return false, false, c.err
		}
		l.batch = batch{
			cpu:     i,
			claim:   cl,
			pos:     cl.Start,
			limit:   min(cl.End, cl.Start+c.batchBytes),
			bias:    c.bias,
			head:    c.head,
			holding: true,
		}
		return true, false, nil
	})
}

// Finish ends the loop's batch, if it holds one.
func (l *batchLoop) Finish() (stalled bool) {
	if !l.holding {
		return false
	}
	e, b := l.e, &l.batch
	c := &e.consumers[b.cpu]
	b.holding = false
	if b.err != nil && c.err == nil {
		c.err = b.err
	}
	e.core.EndClaimLocked(b.cpu, &c.claims, b.claim, b.pos)
	return false
}
