// Package perf reads BPF perf event arrays (BPF_MAP_TYPE_PERF_EVENT_ARRAY)
// with the API of github.com/cilium/ebpf/perf, plus a zero-copy,
// concurrency-safe iterator.
//
// Read and ReadInto copy each record, as upstream does, so switching is a
// change of import path; the error values are upstream's own. Records
// hands out views into each CPU's mmap'd buffer instead: no copy, no
// allocation (a sample that wraps around the end of a CPU's buffer, which
// is mapped once, is copied once into the loop's scratch buffer), and the
// record's space goes back to the kernel only when the caller is done with
// it.
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
// What the kernel sees: when a read call returns, or a Records loop ends
// for any reason (break, error, panic, Close), every CPU's data_tail
// covers every record handed out and released, so no consumed space is
// kept from producers while the reader is idle. Inside a running Records
// loop data_tail is published in batches of at most min(size/8, 256 KiB),
// and always before the loop waits or yields an error. The wait, wake,
// deadline, Flush and Close rules are those of this module's ringbuf
// reader.
//
// Outside Linux the package builds, and NewReader returns an error
// wrapping ebpf.ErrNotSupported.
package perf
