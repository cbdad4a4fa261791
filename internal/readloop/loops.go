//go:build linux

// Package readloop holds the consumer loops the benchmarks share: each reads
// one kind of reader until it is flushed and hands every record's bytes to
// a function, so the XDP, socket-filter and kernel-to-user benchmarks
// compare the readers, not their own copies of the loop.
//
// Every loop runs on the caller's goroutine and returns nil once the
// reader's Flush has been seen and what was in the buffer then has been
// read. The bytes passed to handle are valid only until handle returns.
//
// handle is called through a function value, an indirect call per record
// that the compiler cannot inline: a nanosecond or two, against the
// 45 ns or more per event the consumer spends in BenchmarkK2U
// (cons-ms/Mevent), and the same for every reader compared.
package readloop

import (
	"errors"

	"github.com/cilium/ebpf/perf"
	upstream "github.com/cilium/ebpf/ringbuf"

	"github.com/ebpf-zc/ebpf/ringbuf"
)

// Perf reads rd with ReadInto and returns how many samples the kernel
// reported lost along the way.
func Perf(rd *perf.Reader, handle func([]byte)) (lost uint64, err error) {
	var rec perf.Record
	for {
		err := rd.ReadInto(&rec)
		if errors.Is(err, perf.ErrFlushed) {
			return lost, nil
		}
		if err != nil {
			return lost, err
		}
		if rec.LostSamples > 0 {
			lost += rec.LostSamples
			continue
		}
		handle(rec.RawSample)
	}
}

// Upstream reads rd, cilium/ebpf's ring buffer reader, with ReadInto,
// which copies each record.
func Upstream(rd *upstream.Reader, handle func([]byte)) error {
	var rec upstream.Record
	for {
		err := rd.ReadInto(&rec)
		if errors.Is(err, upstream.ErrFlushed) {
			return nil
		}
		if err != nil {
			return err
		}
		handle(rec.RawSample)
	}
}

// ReadInto reads rd, our ring buffer reader, with ReadInto, which copies
// each record as upstream's does.
func ReadInto(rd *ringbuf.Reader, handle func([]byte)) error {
	var rec ringbuf.Record
	for {
		err := rd.ReadInto(&rec)
		if errors.Is(err, ringbuf.ErrFlushed) {
			return nil
		}
		if err != nil {
			return err
		}
		handle(rec.RawSample)
	}
}

// Records ranges over rd's Records: no copy, each record handed out where
// it lies in the ring.
func Records(rd *ringbuf.Reader, handle func([]byte)) error {
	for rec, err := range rd.Records() {
		if errors.Is(err, ringbuf.ErrFlushed) {
			return nil
		}
		if err != nil {
			return err
		}
		handle(rec.RawSample)
	}
	return nil
}
