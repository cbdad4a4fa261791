package perf

// batch is a claim on one CPU's buffer: a loop's, walked outside the
// mutex, or a read's, under it.
type batch struct {
	c       *consumer
	index   int // c's in engine.consumers
	claim   claim
	pos     uint64 // records below are consumed
	limit   uint64 // the walk ends at the first record boundary from here
	bias    uint64 // the consumer's, when claimed
	head    uint64 // the consumer's, when claimed
	holding bool
	err     error // the walk stopped at a corrupt record
}

// claimLocked claims a batch of buffer i: a returned claim whole, else
// what is produced, all of it if alone, else up to batchBytes.
func (e *engine) claimLocked(i int, alone bool) (batch, bool, error) {
	c := &e.consumers[i]
	var cl claim
	switch r, returned := c.claims.Returned(); {
	case c.overwrite && !e.paused:
		return batch{}, false, ErrMustBePaused
	case c.err != nil:
		return batch{}, false, c.err
	case returned:
		cl = c.claims.Take(r.Start, r.End, true)
	case !c.produced():
		return batch{}, false, c.err
	case alone:
		cl = c.claims.Hold(c.head)
	default:
		cl = c.claims.Hold(c.scan(c.claims.Pos(), c.head))
	}
	return batch{
		c:       c,
		index:   i,
		claim:   cl,
		pos:     cl.Start,
		limit:   min(cl.End, cl.Start+c.batchBytes),
		bias:    c.bias,
		head:    c.head,
		holding: true,
	}, true, nil
}

// releaseLocked ends b: what the walk did not reach goes back; publishes.
func (b *batch) releaseLocked() (gaveBack bool) {
	c := b.c
	b.holding = false
	if b.err != nil && c.err == nil {
		c.err = b.err
	}
	gaveBack = c.claims.Release(b.claim, b.pos)
	c.publish()
	return gaveBack
}

// walk yields b's records from b.pos up to b.limit or a corrupt record,
// and reports whether the body asked for more: one header load a record,
// a size load a sample, every read inside the claim whatever the buffer
// holds.
func (b *batch) walk(rec *Record, scratch *[]byte, yield func(*Record, error) bool) bool {
	buf := b.c.buf
	rec.CPU = b.c.cpu
	p, limit, end, bias := b.pos, b.limit, b.claim.End, b.bias
	for p < limit {
		h := buf.headerAt(p - bias)
		size := uint64(h.size)
		if size < sampleHeaderSize || size%recordAlign != 0 || size > end-p || h.typ != recordSample {
			// Rare: lost samples, an unknown type, a bad or cut record.
			next, more, ok := b.other(rec, p, yield)
			if !ok {
				return more
			}
			p = next
			continue
		}
		length := buf.u32At(p - bias + headerSize)
		if uint64(length) > size-sampleHeaderSize {
			_, err := buf.parse(p-bias, end-p)
			b.err = b.c.cpuErr(err)
			break
		}
		next := p + size
		rec.RawSample = buf.view(p-bias+sampleHeaderSize, length, scratch)
		rec.LostSamples = 0
		rec.Remaining = b.remaining(next)
		b.pos = next // consumed once handed out, whatever the body does
		if !yield(rec, nil) {
			return false
		}
		p = next
	}
	b.pos = p
	return true
}

// other handles a record at p that is not a well-formed sample: ok false
// stops the walk (more: the body asked for more), else next is past it.
func (b *batch) other(rec *Record, p uint64, yield func(*Record, error) bool) (next uint64, more, ok bool) {
	got, err := b.c.buf.parse(p-b.bias, b.claim.End-p)
	switch {
	case err != nil && b.c.overwrite:
		b.pos = b.claim.End // cut short by the wrap (abi.go): the window ends
		return 0, true, false
	case err != nil:
		b.pos, b.err = p, b.c.cpuErr(err)
		return 0, true, false
	}
	next = p + got.size
	b.pos = next
	if got.typ != recordLost {
		more = yield(nil, &unknownEventError{got.typ})
	} else {
		rec.RawSample, rec.LostSamples, rec.Remaining = nil, got.lost, b.remaining(next)
		more = yield(rec, nil)
	}
	return next, more, more
}

// remaining is Record.Remaining after a record ending at end.
func (b *batch) remaining(end uint64) int {
	if b.c.overwrite {
		return -1
	}
	return int(b.head - end)
}

// batchLoop is a loop's batch, a readers.Batcher.
type batchLoop struct {
	e *engine
	batch
}

// Claim claims a batch of CPU i's buffer.
func (l *batchLoop) Claim(i int, alone bool) (ok, busy bool, err error) {
	l.batch, ok, err = l.e.claimLocked(i, alone)
	return ok, false, err
}

// Finish ends the loop's batch, if it holds one.
func (l *batchLoop) Finish() (stalled bool) {
	if l.holding {
		l.e.core.UserDoneLocked(l.index, l.releaseLocked())
	}
	return false
}
