//go:build linux

package perf_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/exampletest"
	"github.com/ebpf-zc/ebpf/perf"
)

// The examples use cilium/ebpf's API and nothing else, so that each
// works as shown. They build their maps as a user would; output, below,
// builds with asm the BPF program that fills the buffers, and test-runs it:
// copy it along with an example. The program, in C:
//
//	struct {
//		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
//		__uint(key_size, sizeof(__u32));
//		__uint(value_size, sizeof(__u32));
//	} events SEC(".maps");
//
//	SEC("raw_tp") int produce(struct bpf_raw_tracepoint_args *ctx) {
//		__u64 sample = ctx->args[0];
//		bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &sample, sizeof(sample));
//		return 0;
//	}

// output loads that program for events and test-runs it n times on CPU 0,
// with the numbers 0 to n-1 as its argument: n 8-byte samples, in host
// byte order, all in CPU 0's buffer. A sample goes nowhere unless a
// Reader is open on events: the kernel has no buffer to put it in.
func output(events *ebpf.Map, n int) error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.RawTracepoint,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord), // ctx->args[0]
			asm.StoreMem(asm.RFP, -8, asm.R2, asm.DWord),
			asm.LoadMapPtr(asm.R2, events.FD()), // r1 is still ctx
			asm.LoadImm(asm.R3, unix.BPF_F_CURRENT_CPU, asm.DWord),
			asm.Mov.Reg(asm.R4, asm.RFP),
			asm.Add.Imm(asm.R4, -8),
			asm.Mov.Imm(asm.R5, 8),
			asm.FnPerfEventOutput.Call(),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	if err != nil {
		return err
	}
	defer prog.Close()
	for i := range uint64(n) {
		opts := ebpf.RunOptions{Context: []uint64{i}, Flags: unix.BPF_F_TEST_RUN_ON_CPU, CPU: 0}
		if _, err := prog.Run(&opts); err != nil {
			return err
		}
	}
	return nil
}

// ReadInto reuses the record it is given, buffer included: a loop that
// keeps nothing reads without allocating. rec.CPU names the buffer a
// sample came from; a sample's 8 bytes come with 4 of the kernel's padding.
func ExampleReader_ReadInto() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray}) // one entry per CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	rd, err := perf.NewReader(events, os.Getpagesize()) // a page per CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	if err := output(events, 3); err != nil { // the BPF program runs 3 times
		fmt.Println(err)
		return
	}
	rd.SetDeadline(time.Now().Add(100 * time.Millisecond))

	var rec perf.Record
	for {
		if err := rd.ReadInto(&rec); err != nil {
			break // os.ErrDeadlineExceeded once every buffer is empty
		}
		fmt.Println("sample", binary.NativeEndian.Uint64(rec.RawSample), "of", len(rec.RawSample), "bytes from CPU", rec.CPU)
	}
}

// Records ranges over views of the samples of every CPU's buffer. A
// sample that does not fit because the reader fell behind is lost, and the
// kernel says how many it lost, in a record of its own, once there is
// room again.
func ExampleReader_Records() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray}) // one entry per CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	// One page per CPU: the samples below do not all fit.
	rd, err := perf.NewReader(events, os.Getpagesize())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()

	var samples, lost uint64
	read := func() {
		rd.SetDeadline(time.Now().Add(100 * time.Millisecond))
		for rec, err := range rd.Records() {
			if err != nil {
				return // os.ErrDeadlineExceeded once every buffer is empty
			}
			if rec.LostSamples > 0 {
				lost += rec.LostSamples
				continue
			}
			samples++ // rec.RawSample is valid until the loop body returns
		}
	}
	// A sample takes 24 bytes of a buffer (header, size, data, padding):
	// a page holds a third of these.
	n := os.Getpagesize() / 8
	if err := output(events, n); err != nil { // the BPF program runs n times
		fmt.Println(err)
		return
	}
	read()
	if err := output(events, 1); err != nil { // the kernel reports the lost samples before this one
		fmt.Println(err)
		return
	}
	read()
	fmt.Println("every sample accounted for:", samples+lost == uint64(n+1), "some lost:", lost > 0)
}

// Batches hands out the records a run of one CPU's buffer at a time: the
// body knows where a batch ends (to aggregate, then act once a batch), and
// the compiler inlines the inner loop over its Samples, so a body that
// does little per sample runs as fast as a hand-written walk. Lost
// samples are counted by the batch instead of coming as records.
func ExampleReader_Batches() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray}) // one entry per CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	rd, err := perf.NewReader(events, os.Getpagesize()) // a page per CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	if err := output(events, 3); err != nil { // the BPF program runs 3 times
		fmt.Println(err)
		return
	}
	rd.SetDeadline(time.Now().Add(100 * time.Millisecond))

	for batch, err := range rd.Batches() {
		if perf.IsUnknownEvent(err) {
			continue // a record of a type the reader does not know: skipped
		}
		if err != nil {
			fmt.Println("stopped:", errors.Is(err, os.ErrDeadlineExceeded))
			break
		}
		var n, sum uint64
		for sample := range batch.Samples() {
			sum += binary.NativeEndian.Uint64(sample) // valid until the outer body returns
			n++
		}
		fmt.Println("CPU", batch.CPU(), "batch:", n, "samples adding up to", sum, "and", batch.LostSamples(), "lost")
	}
}

// NewCPUReader reads one CPU's buffer: with a Reader per CPU, each read
// by a goroutine of its own, no two readers share a lock, and each has a
// readiness descriptor of its own (ReadinessFD), as libbpf's
// perf_buffer__buffer_fd and perf_buffer__consume_buffer and aya's
// per-CPU buffers serve one CPU.
func ExampleNewCPUReader() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray}) // one entry per CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	rd, err := perf.NewCPUReader(events, 0, os.Getpagesize(), perf.ReaderOptions{}) // CPU 0's buffer alone
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	if err := output(events, 2); err != nil { // the BPF program runs twice on CPU 0
		fmt.Println(err)
		return
	}
	rd.SetDeadline(time.Now().Add(100 * time.Millisecond))

	n := 0
	for rec, err := range rd.Records() {
		if err != nil {
			break // os.ErrDeadlineExceeded once the buffer is empty
		}
		if rec.CPU == 0 {
			n++
		}
	}
	fmt.Println(n, "samples from CPU 0")
}

func TestExampleOutputs(t *testing.T) {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
	bpftest.SkipIfNoPerfEventArray(t, err)
	events.Close()

	exampletest.Run(t, []exampletest.Example{
		{Name: "ExampleReader_ReadInto", Run: ExampleReader_ReadInto, Output: "sample 0 of 12 bytes from CPU 0\nsample 1 of 12 bytes from CPU 0\nsample 2 of 12 bytes from CPU 0\n"},
		{Name: "ExampleReader_Records", Run: ExampleReader_Records, Output: "every sample accounted for: true some lost: true\n"},
		{Name: "ExampleReader_Batches", Run: ExampleReader_Batches, Output: "CPU 0 batch: 3 samples adding up to 3 and 0 lost\nstopped: true\n"},
		{Name: "ExampleNewCPUReader", Run: ExampleNewCPUReader, Output: "2 samples from CPU 0\n"},
	})
}
