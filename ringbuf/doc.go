// Package ringbuf reads BPF ring buffers (BPF_MAP_TYPE_RINGBUF, Linux 5.8+)
// with the API of github.com/cilium/ebpf/ringbuf, plus zero-copy reads.
//
// Read and ReadInto copy each record with upstream's error values:
// switching is a change of import path. Peek, PeekInto and Consume,
// Records and Batches hand out views into the ring instead; a record's
// space goes back to the kernel when the caller is done with it.
//
//	rd, err := ringbuf.NewReader(events)
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
// When a read returns, or a loop ends for any reason (break, error,
// panic, Close), the kernel's consumer position covers every record
// handed out and released; a running loop publishes after each batch of
// at most min(size/8, 256 KiB) and before it waits or yields an error. A
// record still held keeps the position below it, and the kernel wakes
// nobody meanwhile: a waiting read looks every millisecond.
//
// MultiReader reads several rings as one stream; RawReader is cilium/ebpf
// main's zero-copy API for one goroutine; SnapshotReader reads
// overwrite-mode rings; Writer writes user ring buffers. On Windows,
// NewReader reads WindowsRingBuf maps with cilium/ebpf's reader: the
// zero-copy API and MultiReader return an error wrapping
// ebpf.ErrNotSupported, as NewReader does on other platforms.
package ringbuf
