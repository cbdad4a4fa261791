package ringbuf

import upstream "github.com/cilium/ebpf/ringbuf"

// readIntoUpstream is ReadInto on Windows by rd, cilium/ebpf's reader:
// apart, so that Linux tests run it.
func readIntoUpstream(rd *upstream.Reader, rec *Record) error {
	if rec == nil {
		return errNilRecord("ReadInto")
	}
	up := upstream.Record{RawSample: rec.RawSample}
	err := rd.ReadInto(&up)
	rec.RawSample, rec.Remaining, rec.Ring = up.RawSample, up.Remaining, 0
	return err
}

// copyOnlySeq is Records and Batches on Windows: one pair, the error.
func copyOnlySeq[T any](yield func(T, error) bool) {
	var zero T
	yield(zero, errCopyOnly)
}
