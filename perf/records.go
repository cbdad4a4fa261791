package perf

import "iter"

// Records returns an iterator over the records of every CPU's buffer,
// consumed in place, with ringbuf.Reader.Records' contract. rec.RawSample
// is valid until the body returns (a copy in the loop's memory if it wraps
// around the buffer's end). Lost samples come with LostSamples set, an
// unknown type as an error that does not end the loop ([IsUnknownEvent]).
// A CPU's records come in the kernel's order.
func (r *Reader) Records() iter.Seq2[*Record, error] { return r.records }

// records is the engine's batch loop, with a Record for each sample.
func (bs *buffers) records(yield func(*Record, error) bool) {
	var rec Record
	l := &batchLoop{buffers: bs}
	bs.engine.Loop(l, func(err error) bool {
		if err != nil {
			return yield(nil, err)
		}
		return l.walkRecords(&rec, yield)
	})
}

// Batches returns an iterator over batches of one CPU's records ([Batch]),
// CPUs taking turns, with the guarantees of [Reader.Records]; lost samples
// are counted per batch, and a record of an unknown type comes as an error
// that does not end the loop.
func (r *Reader) Batches() iter.Seq2[*Batch, error] { return r.batches }
