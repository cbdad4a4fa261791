// Package ringbuf reads BPF ring buffers (BPF_MAP_TYPE_RINGBUF, Linux 5.8+)
// with the API of github.com/cilium/ebpf/ringbuf, plus zero-copy reads.
//
// Read and ReadInto copy each record, exactly as upstream does, so
// switching is a change of import path. Peek, PeekInto and Consume, and
// the Records iterator, hand out views into the ring's memory instead: no
// copy, no allocation, and the record's space goes back to the kernel only
// when the caller is done with it.
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
// The consumer position is published to the kernel in batches: the kernel
// may see up to min(size/8, 256 KiB) of consumed records as still in use,
// never more, and sees everything consumed before a read blocks or
// returns an error.
package ringbuf
