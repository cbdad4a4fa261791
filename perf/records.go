package perf

import "iter"

// Records returns an iterator over the records of every CPU's buffer,
// consumed in place, with ringbuf.Reader.Records' contract. rec.RawSample
// is valid until the body returns (a copy in the loop's memory if it
// wraps around the buffer's end). Lost samples come with LostSamples set;
// an unknown type as an error that does not end the loop ([IsUnknownEvent]).
// A CPU's records come in the kernel's order, different CPUs' in none.
func (r *Reader) Records() iter.Seq2[*Record, error] {
	return r.records
}

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

// Batches returns an iterator over batches of the buffers' records, with
// the guarantees of [Reader.Records] and the speed of a hand-written walk:
// Records calls the loop body once a record, Batches once a batch, whose
// [Batch.Samples] loop the compiler inlines into the body. A batch holds
// records of one CPU ([Batch.CPU]) in the kernel's order; CPUs take turns
// a batch at a time. Several goroutines may range at once, each record
// going to one of them. Lost samples are counted per batch
// ([Batch.LostSamples]); a record of an unknown type comes as an error
// that does not end the loop ([IsUnknownEvent]). The loop ends with one
// last pair carrying the error that stopped it, as Records does.
func (r *Reader) Batches() iter.Seq2[*Batch, error] {
	return r.batches
}
