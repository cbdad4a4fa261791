//go:build linux

package ringbuf_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// exampleRing returns a ring buffer holding three 8-byte records numbered
// 0, 1, 2, as a BPF program would leave it.
func exampleRing() (*ebpf.Map, func(), error) {
	events, err := progs.NewRing(4096)
	if err != nil {
		return nil, nil, err
	}
	producer, err := progs.NewRingbufProducer(progs.RingbufSpec{Ring: events, Size: 8})
	if err == nil {
		err = producer.Run(3)
		producer.Close()
	}
	if err != nil {
		events.Close()
		return nil, nil, err
	}
	return events, func() { events.Close() }, nil
}

// Read copies each record: the bytes are the caller's to keep.
func ExampleReader_Read() {
	events, done, err := exampleRing()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()

	rd, err := ringbuf.NewReader(events)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	rd.SetDeadline(time.Now().Add(100 * time.Millisecond))

	var kept [][]byte
	for {
		rec, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		kept = append(kept, rec.RawSample) // safe: a copy
	}
	fmt.Println(len(kept), "records, the first:", kept[0])
	// Output: 3 records, the first: [0 0 0 0 0 0 0 0]
}

// Peek hands out a view into the ring, valid until Consume: decide from
// the bytes in place, copy only what must be kept.
func ExampleReader_Peek() {
	events, done, err := exampleRing()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()

	rd, err := ringbuf.NewReader(events)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	rd.SetDeadline(time.Now().Add(100 * time.Millisecond))

	var rec ringbuf.Record
	for {
		if err := rd.PeekInto(&rec); err != nil {
			break // os.ErrDeadlineExceeded once the ring is empty
		}
		if rec.RawSample[0]%2 == 0 {
			fmt.Println("even record", rec.RawSample[0])
		}
		if err := rd.Consume(); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// even record 0
	// even record 2
}

// Records ranges over views of the records; each is consumed when the
// loop body returns. Several goroutines may range over one Reader.
func ExampleReader_Records() {
	events, done, err := exampleRing()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()

	rd, err := ringbuf.NewReader(events)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	rd.SetDeadline(time.Now().Add(100 * time.Millisecond))

	total := 0
	for rec, err := range rd.Records() {
		if err != nil {
			fmt.Println("stopped:", errors.Is(err, os.ErrDeadlineExceeded))
			break
		}
		total += len(rec.RawSample)
	}
	fmt.Println(total, "bytes")
	// Output:
	// stopped: true
	// 24 bytes
}
