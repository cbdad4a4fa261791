package ringbuf

import "iter"

// Records returns an iterator over the ring's records, consumed in place.
// rec.RawSample aliases the ring and is valid until the loop body returns;
// copy what must outlive it. A record is consumed when the body returns,
// also on break and panic. The loop blocks while the ring is empty and
// ends with one last pair carrying the error that stopped it:
// [os.ErrDeadlineExceeded], [ErrFlushed] once the ring is empty, [ErrClosed]
// (after the rest of the batch the loop holds). Several goroutines may
// range over it at once, each record yielded to one of them; the package
// doc says when the kernel learns what a loop consumed.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	if r.copyOnly != nil {
		return copyOnlySeq[*Record]
	}
	return r.records
}

// records is the loop of Batches, with a Record for each sample.
func (e *engine) records(yield func(*Record, error) bool) {
	var rec Record
	for b, err := range e.batches {
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
