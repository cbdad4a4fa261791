//go:build linux

package ringbuf_test

import (
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/ebpf-zc/ebpf/ringbuf"
)

// A Writer sends records the other way, to a BPF program that takes them
// with bpf_user_ringbuf_drain (Linux 6.1+). Write copies a record in;
// Reserve hands out its space to fill in place, and Submit lets the
// program see it.
func ExampleNewWriter() {
	commands, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.UserRingbuf, MaxEntries: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer commands.Close()

	w, err := ringbuf.NewWriter(commands)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	if _, err := w.Write([]byte("stop")); err != nil {
		fmt.Println(err)
		return
	}
	r, err := w.Reserve(8)
	if err != nil {
		fmt.Println(err)
		return
	}
	binary.NativeEndian.PutUint64(r.RawSample, 42) // r.RawSample is the ring's memory
	if err := w.Submit(r); err != nil {
		fmt.Println(err)
		return
	}

	drain, err := newDrain(commands) // the BPF side, below
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drain.Close()
	taken, err := drain.Run(&ebpf.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("the BPF program took", taken, "records")
}

// newDrain loads, with cilium/ebpf's asm, a BPF program that takes every
// record submitted to commands and returns how many it took. Its callback
// ignores the records; in C:
//
//	struct {
//		__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
//		__uint(max_entries, 4096);
//	} commands SEC(".maps");
//
//	static long on_record(struct bpf_dynptr *record, void *ctx) {
//		return 0; // read it with bpf_dynptr_read; returning 1 stops the drain
//	}
//
//	SEC("raw_tp") int drain(void *ctx) {
//		return bpf_user_ringbuf_drain(&commands, on_record, NULL, 0);
//	}
//
// The verifier takes a callback only from a program whose functions are
// described in BTF, which clang writes and asm must be given.
func newDrain(commands *ebpf.Map) (*ebpf.Program, error) {
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	ptr := &btf.Pointer{Target: &btf.Void{}}
	drain := &btf.Func{Name: "drain", Linkage: btf.GlobalFunc, Type: &btf.FuncProto{
		Return: long, Params: []btf.FuncParam{{Name: "ctx", Type: ptr}},
	}}
	onRecord := &btf.Func{Name: "on_record", Linkage: btf.StaticFunc, Type: &btf.FuncProto{
		Return: long, Params: []btf.FuncParam{{Name: "record", Type: ptr}, {Name: "ctx", Type: ptr}},
	}}
	// A reference to a function: ld_imm64 with src_reg BPF_PSEUDO_FUNC,
	// whose offset NewProgram fills in where the constant is -1.
	loadOnRecord := asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R2, Src: asm.PseudoFunc, Constant: -1}
	return ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.RawTracepoint,
		License: "GPL",
		Instructions: asm.Instructions{
			btf.WithFuncMetadata(asm.LoadMapPtr(asm.R1, commands.FD()), drain),
			loadOnRecord.WithReference("on_record"),
			asm.Mov.Imm(asm.R3, 0), // no context for the callback
			asm.Mov.Imm(asm.R4, 0),
			asm.FnUserRingbufDrain.Call(),
			asm.Return(), // the number of records taken, or -errno

			btf.WithFuncMetadata(asm.Mov.Imm(asm.R0, 0), onRecord).WithSymbol("on_record"),
			asm.Return(),
		},
	})
}
