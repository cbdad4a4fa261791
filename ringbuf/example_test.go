//go:build linux

package ringbuf_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/exampletest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// The examples use cilium/ebpf's API and nothing else, so that each
// works as shown. They build their maps as a user would; submit, below,
// builds with asm the BPF program that fills the ring, and test-runs it:
// copy it along with an example. The program, in C:
//
//	struct {
//		__uint(type, BPF_MAP_TYPE_RINGBUF);
//		__uint(max_entries, 4096);
//	} events SEC(".maps");
//
//	SEC("raw_tp") int produce(struct bpf_raw_tracepoint_args *ctx) {
//		__u64 *rec = bpf_ringbuf_reserve(&events, 8, 0);
//		if (!rec)
//			return 0; // the ring is full
//		*rec = ctx->args[0];
//		bpf_ringbuf_submit(rec, 0);
//		return 0;
//	}

// submit loads that program for events and test-runs it n times, with
// the numbers 0 to n-1 as its argument: n 8-byte records, in host byte
// order. A raw tracepoint is test-run with an argument of our choosing.
func submit(events *ebpf.Map, n int) error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.RawTracepoint,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Reg(asm.R6, asm.R1), // ctx, kept across the calls
			asm.LoadMapPtr(asm.R1, events.FD()),
			asm.Mov.Imm(asm.R2, 8),
			asm.Mov.Imm(asm.R3, 0),
			asm.FnRingbufReserve.Call(),
			asm.JEq.Imm(asm.R0, 0, "exit"),            // the ring is full
			asm.LoadMem(asm.R1, asm.R6, 0, asm.DWord), // ctx->args[0]
			asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.R0),
			asm.Mov.Imm(asm.R2, 0),
			asm.FnRingbufSubmit.Call(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
			asm.Return(),
		},
	})
	if err != nil {
		return err
	}
	defer prog.Close()
	for i := range uint64(n) {
		if _, err := prog.Run(&ebpf.RunOptions{Context: []uint64{i}}); err != nil {
			return err
		}
	}
	return nil
}

// Read copies each record: the bytes are the caller's to keep.
func ExampleReader_Read() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	if err := submit(events, 3); err != nil { // the BPF program runs 3 times
		fmt.Println(err)
		return
	}

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
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	if err := submit(events, 3); err != nil { // the BPF program runs 3 times
		fmt.Println(err)
		return
	}

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
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	if err := submit(events, 3); err != nil { // the BPF program runs 3 times
		fmt.Println(err)
		return
	}

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
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	if err := submit(events, 3); err != nil { // the BPF program runs 3 times
		fmt.Println(err)
		return
	}

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

// A context ends a blocked read: context.AfterFunc closes the Reader when
// the context is done, and the read returns ErrClosed. To stop reading
// without closing, call rd.SetDeadline(time.Now()) from AfterFunc instead:
// the read returns os.ErrDeadlineExceeded.
func Example_cancel() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	if err := submit(events, 2); err != nil { // the BPF program runs twice
		fmt.Println(err)
		return
	}

	rd, err := ringbuf.NewReader(events)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { rd.Close() })
	defer stop()

	var rec ringbuf.Record
	for {
		err := rd.ReadInto(&rec) // blocks once the ring is empty
		if errors.Is(err, ringbuf.ErrClosed) {
			fmt.Println("stopped:", context.Cause(ctx))
			return
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("record", binary.NativeEndian.Uint64(rec.RawSample))
	}
}

// A RawReader serves one goroutine, as cilium/ebpf main's does: a lease
// reads views of several records and commits them at once.
func ExampleRawReader_WithLease() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	if err := submit(events, 3); err != nil { // the BPF program runs 3 times
		fmt.Println(err)
		return
	}

	rr, err := ringbuf.NewRawReader(events)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rr.Close()
	rr.SetDeadline(time.Now().Add(100 * time.Millisecond))

	err = rr.WithLease(func(lease ringbuf.Lease) error {
		var sum uint64
		for range 3 {
			sample, _, err := lease.ReadSample() // valid until Commit
			if err != nil {
				return err
			}
			sum += binary.NativeEndian.Uint64(sample)
		}
		lease.Commit() // the kernel may reuse the three records' space
		fmt.Println("3 records, numbers adding up to", sum)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}

// A MultiReader reads several rings, a ring per CPU say, through one
// loop; rec.Ring names the map a record came from, by its index in
// NewMultiReader's list. The BPF side writes to a ring of its choice:
//
//	struct {
//		__uint(type, BPF_MAP_TYPE_RINGBUF);
//		__uint(max_entries, 4096);
//	} ring0 SEC(".maps"), ring1 SEC(".maps");
//
//	bpf_ringbuf_output(cpu == 0 ? &ring0 : &ring1, &seq, 8, 0);
func ExampleMultiReader() {
	var rings []*ebpf.Map
	defer func() {
		for _, m := range rings {
			m.Close()
		}
	}()
	for i := range 2 {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
		if err != nil {
			fmt.Println(err)
			return
		}
		rings = append(rings, m)
		if err := submit(m, 2+i); err != nil { // 2 records in ring 0, 3 in ring 1
			fmt.Println(err)
			return
		}
	}

	mr, err := ringbuf.NewMultiReader(rings...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	mr.SetDeadline(time.Now().Add(100 * time.Millisecond))

	perRing := make([]int, mr.Rings())
	for rec, err := range mr.Records() {
		if err != nil {
			break // os.ErrDeadlineExceeded once every ring is empty
		}
		perRing[rec.Ring]++
	}
	fmt.Println("records per ring:", perRing)
}

// A program that picks its ring at run time keeps the rings in a map of
// maps; NewMultiReaderFromMapOfMaps reads every ring the map holds, and
// rec.Ring is the ring's key. The BPF side:
//
//	struct ring {
//		__uint(type, BPF_MAP_TYPE_RINGBUF);
//		__uint(max_entries, 4096);
//	};
//	struct {
//		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
//		__uint(max_entries, 2);
//		__type(key, __u32);
//		__array(values, struct ring);
//	} rings SEC(".maps");
//
//	__u32 key = bpf_get_smp_processor_id() % 2;
//	void *ring = bpf_map_lookup_elem(&rings, &key);
//	if (ring)
//		bpf_ringbuf_output(ring, &seq, 8, 0);
func ExampleNewMultiReaderFromMapOfMaps() {
	ringSpec := &ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096}
	outer, err := ebpf.NewMap(&ebpf.MapSpec{
		Type:       ebpf.ArrayOfMaps,
		KeySize:    4,
		ValueSize:  4,
		MaxEntries: 2,
		InnerMap:   ringSpec,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer outer.Close()
	for key := range uint32(2) {
		ring, err := ebpf.NewMap(ringSpec)
		if err != nil {
			fmt.Println(err)
			return
		}
		err = outer.Put(key, ring) // the outer map holds its own reference
		if err == nil {
			err = submit(ring, 1+int(key)) // 1 record in ring 0, 2 in ring 1
		}
		ring.Close()
		if err != nil {
			fmt.Println(err)
			return
		}
	}

	mr, err := ringbuf.NewMultiReaderFromMapOfMaps(outer)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	mr.SetDeadline(time.Now().Add(100 * time.Millisecond))

	perKey := map[int]int{}
	for rec, err := range mr.Records() {
		if err != nil {
			break // os.ErrDeadlineExceeded once every ring is empty
		}
		perKey[rec.Ring]++
	}
	fmt.Println("records per key:", perKey)
}

// Positions shows where a ring stands, as libbpf's ring__consumer_pos,
// ring__producer_pos and ring__avail_data_size do: here, per ring of a
// MultiReader, to see which one lags. Each 8-byte record takes 16 bytes
// of the ring, its header included.
func ExampleMultiReader_Positions() {
	var rings []*ebpf.Map
	defer func() {
		for _, m := range rings {
			m.Close()
		}
	}()
	for i := range 2 {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
		if err != nil {
			fmt.Println(err)
			return
		}
		rings = append(rings, m)
		if err := submit(m, 1+2*i); err != nil { // 1 record in ring 0, 3 in ring 1
			fmt.Println(err)
			return
		}
	}

	mr, err := ringbuf.NewMultiReader(rings...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	for ring := range mr.Rings() {
		pos, err := mr.Positions(ring) // a snapshot: producers move on
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("ring %d: consumer %d, producer %d, %d of %d bytes waiting\n",
			ring, pos.Consumer, pos.Producer, pos.AvailableBytes(), pos.Size)
	}
}

func TestExampleOutputs(t *testing.T) {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	bpftest.SkipIfNoRingBuf(t, err)
	events.Close()

	exampletest.Run(t, []exampletest.Example{
		{Name: "ExampleReader_Read", Run: ExampleReader_Read, Output: "3 records, the first: [0 0 0 0 0 0 0 0]\n"},
		{Name: "ExampleReader_Peek", Run: ExampleReader_Peek, Output: "even record 0\neven record 2\n"},
		{Name: "ExampleReader_Records", Run: ExampleReader_Records, Output: "stopped: true\n24 bytes\n"},
		{Name: "ExampleReader_Batches", Run: ExampleReader_Batches, Output: "stopped: true\n3 records, numbers adding up to 3\n"},
		{Name: "Example_cancel", Run: Example_cancel, Output: "record 0\nrecord 1\nstopped: context deadline exceeded\n"},
		{Name: "ExampleRawReader_WithLease", Run: ExampleRawReader_WithLease, Output: "3 records, numbers adding up to 3\n"},
		{Name: "ExampleMultiReader", Run: ExampleMultiReader, Output: "records per ring: [2 3]\n"},
		{Name: "ExampleNewWriter", Run: ExampleNewWriter, Output: "the BPF program took 2 records\n", Needs: progs.HaveUserRingbuf()},
		{Name: "ExampleNewMultiReaderFromMapOfMaps", Run: ExampleNewMultiReaderFromMapOfMaps, Output: "records per key: map[0:1 1:2]\n"},
		{Name: "ExampleReader_ReadinessFD", Run: ExampleReader_ReadinessFD, Output: "3 records\n"},
		{Name: "ExampleMultiReader_Positions", Run: ExampleMultiReader_Positions, Output: "ring 0: consumer 0, producer 16, 16 of 4096 bytes waiting\nring 1: consumer 0, producer 48, 48 of 4096 bytes waiting\n"},
	})
}
