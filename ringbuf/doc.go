// Package ringbuf reads BPF ring buffers (BPF_MAP_TYPE_RINGBUF, Linux 5.8+)
// with the API of github.com/cilium/ebpf/ringbuf, plus zero-copy reads.
//
// Read and ReadInto copy each record, exactly as upstream does, so
// switching is a change of import path; the error values are upstream's
// own. Peek, PeekInto and Consume, the Records iterator and its batch form
// Batches hand out views into the ring's memory instead: no copy, no
// allocation, and the record's space goes back to the kernel only when the
// caller is done with it.
//
//	rd, err := ringbuf.NewReader(events) // a BPF_MAP_TYPE_RINGBUF map
//	if err != nil {
//		return err
//	}
//	defer rd.Close()
//	for rec, err := range rd.Records() {
//		if err != nil {
//			return err // ErrClosed after Close, and so on
//		}
//		process(rec.RawSample) // valid until the loop body returns
//	}
//
// What the kernel sees: when a read call (Read, ReadInto, Peek, PeekInto,
// Consume) returns, or a Records or Batches loop ends for any reason
// (break, error, panic, Close), the kernel's consumer position covers every
// record handed out and released, so no consumed space is kept from
// producers while the reader is idle. Inside a running loop the position is published after
// each batch of at most min(size/8, 256 KiB), and always before the loop
// waits or yields an error. A record still held (a Peek view, a loop body
// running in another goroutine) keeps the position below it; the kernel
// then wakes nobody for later records, so a read waiting meanwhile looks
// again every millisecond. Close never moves the kernel's position back.
//
// MultiReader reads several ring buffers (a ring per CPU, say) as one
// stream through one epoll, with the same contract per ring.
//
// RawReader is cilium/ebpf main's zero-copy API, for one goroutine at a
// time: inside WithLease, Lease.ReadSample hands out views that stay valid
// until Lease.Commit or the lease's end, and the kernel learns what the
// lease read when it commits, when it ends, and before a ReadSample waits
// on an empty ring.
//
// On Windows (eBPF for Windows), NewReader reads WindowsRingBuf maps with
// cilium/ebpf's own reader: the copy API (Read, ReadInto, SetDeadline,
// Flush, Close, BufferSize, AvailableBytes) works as in cilium/ebpf; Peek,
// PeekInto, Consume, Records, Batches, RawReader and MultiReader return an
// error wrapping ebpf.ErrNotSupported. Elsewhere the package builds, and
// NewReader returns an error wrapping ebpf.ErrNotSupported.
package ringbuf
