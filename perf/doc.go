// Package perf reads BPF perf event arrays (BPF_MAP_TYPE_PERF_EVENT_ARRAY)
// with the API of github.com/cilium/ebpf/perf, plus zero-copy,
// concurrency-safe iterators.
//
// Read and ReadInto copy each record, as upstream does, with upstream's
// error values. Records hands out views into each CPU's buffer instead (a
// sample that wraps around the end of the buffer, which is mapped once, is
// copied into the loop's own memory); Batches hands them out a run of one
// CPU's records at a time, for a loop whose inner walk the compiler
// inlines.
//
//	rd, err := perf.NewReader(events, 1<<20) // a BPF_MAP_TYPE_PERF_EVENT_ARRAY map
//	if err != nil {
//		return err
//	}
//	defer rd.Close()
//	for rec, err := range rd.Records() {
//		if err != nil {
//			return err // ErrClosed after Close, and so on
//		}
//		if rec.LostSamples > 0 {
//			lost += rec.LostSamples
//			continue
//		}
//		process(rec.CPU, rec.RawSample) // valid until the loop body returns
//	}
//
// What the kernel sees (data_tail) and the wait, deadline, Flush and Close
// rules are those of this module's ringbuf reader. Outside Linux,
// NewReader returns an error wrapping ebpf.ErrNotSupported.
package perf
