//go:build linux

package ringbuf_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// The examples need BPF, which an unprivileged go test does not have, and
// an example with an "// Output:" comment cannot skip. So, as cilium/ebpf
// does with its examples that need a kernel, they carry no "// Output:"
// and go test only compiles them; TestExampleOutputs runs each one and
// checks what it prints, and skips, saying why, where BPF is missing.

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
}

// Batches hands out the records a batch at a time; the inner loop over
// each batch's Samples is inlined by the compiler, so a loop that does
// little per record runs as fast as a hand-written walk.
func ExampleReader_Batches() {
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

	var sum, n uint64
	for batch, err := range rd.Batches() {
		if err != nil {
			fmt.Println("stopped:", errors.Is(err, os.ErrDeadlineExceeded))
			break
		}
		for sample := range batch.Samples() {
			sum += uint64(sample[0]) // valid until the outer body returns
			n++
		}
	}
	fmt.Println(n, "records, numbers adding up to", sum)
}

func TestExampleOutputs(t *testing.T) {
	events, err := progs.NewRing(4096)
	bpftest.SkipIfUnavailable(t, err, "BPF ring buffers")
	events.Close()

	for _, tt := range []struct {
		name    string
		example func()
		want    string
	}{
		{"ExampleReader_Read", ExampleReader_Read, "3 records, the first: [0 0 0 0 0 0 0 0]\n"},
		{"ExampleReader_Peek", ExampleReader_Peek, "even record 0\neven record 2\n"},
		{"ExampleReader_Records", ExampleReader_Records, "stopped: true\n24 bytes\n"},
		{"ExampleReader_Batches", ExampleReader_Batches, "stopped: true\n3 records, numbers adding up to 3\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := exampleOutput(t, tt.example); got != tt.want {
				t.Errorf("%s printed:\n%s\nwant:\n%s", tt.name, got, tt.want)
			}
		})
	}
}

// exampleOutput runs an example with os.Stdout captured, as go test runs
// an example with an "// Output:" comment, and returns what it printed.
func exampleOutput(t *testing.T, example func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	t.Cleanup(func() { os.Stdout = stdout })
	printed := make(chan string)
	go func() {
		var b strings.Builder
		io.Copy(&b, r)
		r.Close()
		printed <- b.String()
	}()
	example()
	os.Stdout = stdout
	w.Close()
	return <-printed
}
