// Package perf reads BPF perf event arrays (BPF_MAP_TYPE_PERF_EVENT_ARRAY)
// with the API of github.com/cilium/ebpf/perf, plus zero-copy iterators
// that several goroutines may range over at once.
//
// Read and ReadInto copy each record, with upstream's errors. Records
// hands out views into each CPU's buffer (a sample that wraps around its
// end is copied into the loop's memory), Batches a run of one CPU's
// records at a time, for a loop the compiler inlines.
//
//	rd, err := perf.NewReader(events, 1<<20)
//	if err != nil {
//		return err
//	}
//	defer rd.Close()
//	for rec, err := range rd.Records() {
//		if err != nil {
//			return err // ErrClosed after Close, and so on
//		}
//		process(rec.CPU, rec.RawSample, rec.LostSamples) // valid until the body returns
//	}
//
// Publishing, waits, deadlines, Flush and Close follow this module's
// ringbuf package, but a perf buffer wakes its reader whatever was
// consumed. Outside Linux, NewReader returns an error wrapping
// ebpf.ErrNotSupported.
package perf
