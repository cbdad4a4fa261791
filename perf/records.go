package perf

import "iter"

// Records returns an iterator over the records of every CPU's buffer,
// consumed in place:
//
//	for rec, err := range rd.Records() {
//		if err != nil {
//			return err // ErrClosed, ErrFlushed, os.ErrDeadlineExceeded, ...
//		}
//		handle(rec.CPU, rec.RawSample, rec.LostSamples)
//	}
//
// rec.RawSample aliases the CPU's buffer and is valid until the loop body
// returns; copy what must outlive it. A CPU's buffer is mapped once, so a
// sample that wraps around its end is the one exception: it is copied
// into a buffer of the loop's own, reused for the next such sample. A
// count of lost samples comes as a record with LostSamples set and no
// RawSample. A record is consumed when the body returns, also on break and
// when the body panics.
//
// The loop blocks while every buffer is empty and ends with one last pair
// carrying the error that stopped it: os.ErrDeadlineExceeded at the
// deadline, ErrFlushed after Flush once every record in the buffers has
// been yielded, ErrClosed after Close, ErrMustBePaused on an overwritable
// Reader that is not paused. A record of an unknown type is the one error
// that does not end the loop: it is consumed, and the loop goes on if the
// body does not break (IsUnknownEvent).
//
// While the loop runs, the kernel learns what it consumed (data_tail) in
// batches of at most min(size/8, 256 KiB) per CPU; before the loop waits,
// yields an error or ends for any reason, the kernel knows all of it.
//
// Several goroutines may range over the same Reader at once; each record
// is yielded to exactly one of them. A loop claims a batch of one CPU's
// records at a time, CPUs taking turns, and hands the rest back if it
// stops early, waking a loop or read that waits for them. Records of one
// CPU reach one loop in the order the kernel wrote them; records of
// different CPUs come in no particular order.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	return r.records
}

// records is the loop of Reader.Records: the engine's batch loop, with
// a Record for each sample.
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

// batch is a loop's claim on one CPU's buffer, read outside mu.
type batch struct {
	cpu     int // index in engine.cpus
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
// (in b.err); after Close it goes on to the end of the batch, as the ring
// buffer reader's loops do.
//
// The hot loop: one header load per record, a size load per sample,
// nothing called but yield and small methods; the checks keep every read
// inside the claim even if the buffer changes under us.
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

// yieldOther handles a record at p that is not a well-formed sample. It
// returns ok false to stop the walk (with more, whether the body asked for
// more), else the position after the record.
func (e *engine) yieldOther(b *batch, rec *Record, p, end uint64, yield func(*Record, error) bool) (more bool, next uint64, ok bool) {
	c := &e.consumers[b.cpu]
	got, err := c.buf.parse(p-b.bias, end-p)
	switch {
	case err != nil && c.overwrite:
		// The oldest record of a full overwritable buffer is cut short by
		// the wrap: the window ends before it.
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

// batchLoop is a loop's batch as the engine's loop sees it
// (readers.Batcher).
type batchLoop struct {
	e *engine
	batch
}

// Finish ends the loop's batch, if it holds one.
func (l *batchLoop) Finish() (stalled bool) {
	if l.holding {
		l.e.finishLocked(&l.batch)
	}
	return false
}

// Claim claims the loop's next batch, unless an overwritable buffer is
// not paused.
func (l *batchLoop) Claim() (ok, busy bool, err error) {
	if err := l.e.checkPausedLocked(); err != nil {
		return false, false, err
	}
	ok, err = l.e.claimBatchLocked(&l.batch)
	return ok, false, err
}

// claimBatchLocked claims a batch from the first CPU that has records,
// starting after the last batch's, so that CPUs take turns: at most one
// batch of min(size/8, 256 KiB) (and the record crossing it) from each per
// turn.
func (e *engine) claimBatchLocked(b *batch) (ok bool, err error) {
	alone := e.core.Wait.Active() == 1
	for k := range e.consumers {
		i := (e.turn + k) % len(e.consumers)
		c := &e.consumers[i]
		if c.err != nil {
			return false, c.err
		}
		cl, ok := c.claimBatch(alone)
		if c.err != nil {
			return false, c.err
		}
		if !ok {
			continue
		}
		e.turn = i + 1
		*b = batch{
			cpu:     i,
			claim:   cl,
			pos:     cl.Start,
			limit:   min(cl.End, cl.Start+c.batchBytes),
			bias:    c.bias,
			head:    c.head,
			holding: true,
		}
		e.core.ClaimedLocked()
		return true, nil
	}
	return false, nil
}

// finishLocked ends a loop's batch: consumed up to b.pos, the rest given
// back, and data_tail published, so the kernel never waits for more than
// a batch.
func (e *engine) finishLocked(b *batch) {
	c := &e.consumers[b.cpu]
	b.holding = false
	if b.err != nil && c.err == nil {
		c.err = b.err
	}
	gaveBack := c.claims.Release(b.claim, b.pos)
	if !e.core.Released() {
		c.publish()
	}
	e.core.ReleasedLocked(b.cpu, gaveBack)
}
