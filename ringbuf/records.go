//go:build !windows

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
func (r *Reader) Records() iter.Seq2[*Record, error] { return r.records }

// Batches returns an iterator over batches of the ring's records, with
// the guarantees of [Reader.Records] and the speed of a hand-written walk: Records
// calls the loop body once a record, Batches once a batch.
func (r *Reader) Batches() iter.Seq2[*Batch, error] { return r.batches }
