//go:build linux

package progs

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// NewUserRing creates a BPF_MAP_TYPE_USER_RINGBUF map of size bytes (a
// power-of-two number of pages).
func NewUserRing(size int) (*ebpf.Map, error) {
	return ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.UserRingbuf, MaxEntries: uint32(size)})
}

// DrainCheck chooses what the drain program's callback does with a record.
type DrainCheck uint8

const (
	// DrainSum reads each record's first 8 bytes and adds them up: the
	// least a consumer does, for benchmarks. Records have at least 8 bytes.
	DrainSum DrainCheck = iota
	// DrainSequence checks records written by CheckedRecord: their length,
	// their last word, and that each producer's sequence numbers arrive in
	// order with none missing or repeated. A record that fails counts as
	// an error.
	DrainSequence
)

// MaxDrainProducers bounds the producer ids of DrainSequence records.
const MaxDrainProducers = 64

// tailMagic is xor'ed into a checked record's sequence number to make its
// last word, so that a record whose end was not written yet is caught.
const tailMagic = 0x5a5a5a5a

// CheckedRecordMin is the smallest record DrainSequence accepts: its
// producer id, length, sequence number and tail word.
const CheckedRecordMin = 24

// CheckedRecord fills record (at least CheckedRecordMin bytes) for
// DrainSequence: the producer id (below MaxDrainProducers) and the
// record's length as two 32-bit words, the producer's sequence number, and
// the tail word last, all in host byte order. The bytes between are left
// as they are.
func CheckedRecord(record []byte, producer uint32, seq uint64) {
	binary.NativeEndian.PutUint32(record[0:], producer)
	binary.NativeEndian.PutUint32(record[4:], uint32(len(record)))
	binary.NativeEndian.PutUint64(record[8:], seq)
	binary.NativeEndian.PutUint64(record[len(record)-8:], seq^tailMagic)
}

// DrainTotals are what a UserRingDrain counted over all its runs.
type DrainTotals struct {
	Records uint64 // records the callback saw (discarded ones are not)
	Errors  uint64 // records that failed DrainSequence's checks
	Sum     uint64 // DrainSum: the sum of first words; DrainSequence: bytes
}

// UserRingDrain is a loaded program that drains a user ring buffer with
// bpf_user_ringbuf_drain (Linux 6.1+) and a callback, a BPF-to-BPF
// function reference, that reads each record through its dynptr with
// bpf_dynptr_read. Run it with Drain.
type UserRingDrain struct {
	Program *ebpf.Program
	totals  *ebpf.Map // DrainTotals, updated atomically: drains may run on several CPUs
	next    *ebpf.Map // DrainSequence: each producer's next sequence number
}

// Offsets in the callback's context on the main function's stack, and in
// the totals map's value, which has the same layout.
const (
	drainRecordsOff = 0
	drainErrorsOff  = 8
	drainSumOff     = 16
	drainCtxSize    = 24
)

// NewUserRingDrain loads a drain program for ring with the given check.
// Flags go to bpf_user_ringbuf_drain: 0, NoWakeup or ForceWakeup.
func NewUserRingDrain(ring *ebpf.Map, check DrainCheck, flags uint64) (*UserRingDrain, error) {
	if err := HaveUserRingbuf(); err != nil {
		return nil, err
	}
	d := &UserRingDrain{}
	var err error
	d.totals, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: drainCtxSize, MaxEntries: 1})
	if err != nil {
		return nil, fmt.Errorf("progs: drain totals: %w", err)
	}
	if check == DrainSequence {
		d.next, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: MaxDrainProducers})
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("progs: drain sequence map: %w", err)
		}
	}
	insns := d.mainFunction(ring, flags)
	if check == DrainSequence {
		insns = append(insns, d.checkCallback()...)
	} else {
		insns = append(insns, sumCallback()...)
	}
	d.Program, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "user_ring_drain",
		Type:         ebpf.SocketFilter,
		License:      "GPL",
		Instructions: insns,
	})
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("progs: load user ring drain: %w", err)
	}
	return d, nil
}

// BTF for the two functions: the verifier accepts a function reference
// (ld_imm64 with BPF_PSEUDO_FUNC) only with func_info, and only to a
// static function ("missing btf func_info", "callback function not
// static": kernel/bpf/verifier.c, check_ld_imm).
var (
	btfLong    = &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	btfVoidPtr = &btf.Pointer{Target: &btf.Void{}}
	drainFunc  = &btf.Func{
		Name:    "user_ring_drain",
		Linkage: btf.GlobalFunc,
		Type: &btf.FuncProto{Return: btfLong, Params: []btf.FuncParam{
			{Name: "skb", Type: btfVoidPtr},
		}},
	}
	onSampleFunc = &btf.Func{
		Name:    "on_sample",
		Linkage: btf.StaticFunc,
		Type: &btf.FuncProto{Return: btfLong, Params: []btf.FuncParam{
			{Name: "dynptr", Type: btfVoidPtr},
			{Name: "ctx", Type: btfVoidPtr},
		}},
	}
)

// mainFunction zeroes the callback's context, drains, adds the context to
// the totals and returns what bpf_user_ringbuf_drain returned: the number
// of records taken, or a negative errno (-EBUSY while another drain runs).
func (d *UserRingDrain) mainFunction(ring *ebpf.Map, flags uint64) asm.Instructions {
	ctx := int16(-drainCtxSize)
	insns := asm.Instructions{
		btf.WithFuncMetadata(asm.Mov.Imm(asm.R1, 0), drainFunc),
		asm.StoreMem(asm.R10, ctx+drainRecordsOff, asm.R1, asm.DWord),
		asm.StoreMem(asm.R10, ctx+drainErrorsOff, asm.R1, asm.DWord),
		asm.StoreMem(asm.R10, ctx+drainSumOff, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, ring.FD()),
		loadFunction(asm.R2, "on_sample"),
		asm.Mov.Reg(asm.R3, asm.R10),
		asm.Add.Imm(asm.R3, int32(ctx)),
		asm.Mov.Imm(asm.R4, int32(flags)),
		asm.FnUserRingbufDrain.Call(),
		asm.Mov.Reg(asm.R6, asm.R0),
		asm.LoadMapValue(asm.R1, d.totals.FD(), 0),
	}
	for _, off := range []int16{drainRecordsOff, drainErrorsOff, drainSumOff} {
		insns = append(insns,
			asm.LoadMem(asm.R2, asm.R10, ctx+off, asm.DWord),
			Atomic(asm.AddAtomic, asm.R1, asm.R2, asm.DWord, off),
		)
	}
	return append(insns,
		asm.Mov.Reg(asm.R0, asm.R6),
		asm.Return(),
	)
}

// loadFunction loads into dst a reference to the BPF function named fn:
// ld_imm64 with src_reg BPF_PSEUDO_FUNC, which cilium/ebpf's linker
// resolves like a call. asm has no constructor for it.
func loadFunction(dst asm.Register, fn string) asm.Instruction {
	return asm.Instruction{
		OpCode:   asm.LoadImmOp(asm.DWord),
		Dst:      dst,
		Src:      asm.PseudoFunc,
		Constant: -1,
	}.WithReference(fn)
}

// Registers of the callbacks: the record's dynptr and the context.
const (
	regSampleDynptr = asm.R6
	regDrainCtx     = asm.R7
	regSampleLen    = asm.R8
)

// callbackEntry saves the callback's arguments and counts the record.
func callbackEntry() asm.Instructions {
	return asm.Instructions{
		btf.WithFuncMetadata(asm.Mov.Reg(regSampleDynptr, asm.R1), onSampleFunc).WithSymbol("on_sample"),
		asm.Mov.Reg(regDrainCtx, asm.R2),
		asm.LoadMem(asm.R1, regDrainCtx, drainRecordsOff, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(regDrainCtx, drainRecordsOff, asm.R1, asm.DWord),
	}
}

// readRecord copies size bytes at the offset in register off (or, with
// off R0, at offset 0) of the record into the callback's stack at
// stackOff, leaving bpf_dynptr_read's result in R0.
func readRecord(stackOff int16, size int32, off asm.Register) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, int32(stackOff)),
		asm.Mov.Imm(asm.R2, size),
		asm.Mov.Reg(asm.R3, regSampleDynptr),
	}
	if off == asm.R0 {
		insns = append(insns, asm.Mov.Imm(asm.R4, 0))
	} else {
		insns = append(insns, asm.Mov.Reg(asm.R4, off))
	}
	return append(insns,
		asm.Mov.Imm(asm.R5, 0),
		asm.FnDynptrRead.Call(),
	)
}

// callbackReturn ends a callback: 0, go on with the next record.
func callbackReturn(label string) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSymbol(label),
		asm.Return(),
	}
}

// sumCallback adds each record's first word to the context's sum.
func sumCallback() asm.Instructions {
	insns := callbackEntry()
	insns = append(insns, readRecord(-8, 8, asm.R0)...)
	insns = append(insns,
		asm.JNE.Imm(asm.R0, 0, "done"),
		asm.LoadMem(asm.R1, asm.R10, -8, asm.DWord),
		asm.LoadMem(asm.R2, regDrainCtx, drainSumOff, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R1),
		asm.StoreMem(regDrainCtx, drainSumOff, asm.R2, asm.DWord),
	)
	return append(insns, callbackReturn("done")...)
}

// Stack of the checking callback: the record's first 16 bytes (producer
// id, length, sequence number), its tail word, a probe byte, the key of
// the producer's element in next.
const (
	chkHead = -16
	chkTail = -24
	chkByte = -32
	chkKey  = -40
)

// checkCallback checks a CheckedRecord: that it is exactly as long as it
// says (the read of its last word succeeds, a read of one byte past it
// fails), that the last word matches the sequence number, and that the
// sequence number is the producer's next. Any failure counts an error;
// the producer's next number becomes this one's successor regardless, so
// one loss or repeat counts once.
func (d *UserRingDrain) checkCallback() asm.Instructions {
	insns := callbackEntry()
	insns = append(insns, readRecord(chkHead, 16, asm.R0)...)
	insns = append(insns,
		asm.JNE.Imm(asm.R0, 0, "bad"),
		asm.LoadMem(regSampleLen, asm.R10, chkHead+4, asm.Word),
		asm.JLT.Imm(regSampleLen, CheckedRecordMin, "bad"),
		asm.Mov.Reg(asm.R9, regSampleLen),
		asm.Add.Imm(asm.R9, -8),
	)
	insns = append(insns, readRecord(chkTail, 8, asm.R9)...)
	insns = append(insns, asm.JNE.Imm(asm.R0, 0, "bad"))
	insns = append(insns, readRecord(chkByte, 1, regSampleLen)...)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "bad"), // the record is longer than it says
		asm.LoadMem(asm.R1, asm.R10, chkHead+8, asm.DWord),
		asm.Xor.Imm(asm.R1, tailMagic),
		asm.LoadMem(asm.R2, asm.R10, chkTail, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, "bad"),
		asm.LoadMem(asm.R1, asm.R10, chkHead, asm.Word),
		asm.StoreMem(asm.R10, chkKey, asm.R1, asm.Word),
	)
	insns = append(insns, callLookup(d.next, chkKey)...)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "bad"), // producer id out of range
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.LoadMem(asm.R2, asm.R10, chkHead+8, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R2),
		asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.R0, 0, asm.R3, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, "bad"),
		asm.LoadMem(asm.R1, regDrainCtx, drainSumOff, asm.DWord),
		asm.Add.Reg(asm.R1, regSampleLen),
		asm.StoreMem(regDrainCtx, drainSumOff, asm.R1, asm.DWord),
		asm.Ja.Label("checked"),
		asm.LoadMem(asm.R1, regDrainCtx, drainErrorsOff, asm.DWord).WithSymbol("bad"),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(regDrainCtx, drainErrorsOff, asm.R1, asm.DWord),
	)
	return append(insns, callbackReturn("checked")...)
}

// Drain runs the program once: it takes every submitted record up to the
// first one still reserved (at most 128 Ki records, the kernel's
// BPF_MAX_USER_RINGBUF_SAMPLES) and returns how many it took. A drain
// that meets another one running returns 0 and unix.EBUSY; any other
// error of bpf_user_ringbuf_drain (a malformed record) comes back as its
// errno.
func (d *UserRingDrain) Drain() (int, error) {
	ret, err := d.Program.Run(&ebpf.RunOptions{Data: testInput})
	if err != nil {
		return 0, fmt.Errorf("progs: drain: test run: %w", err)
	}
	if n := int32(ret); n < 0 {
		return 0, fmt.Errorf("progs: bpf_user_ringbuf_drain: %w", unix.Errno(-n))
	}
	return int(ret), nil
}

// Totals returns what every run of the program counted.
func (d *UserRingDrain) Totals() (DrainTotals, error) {
	var v [3]uint64
	if err := d.totals.Lookup(uint32(0), &v); err != nil {
		return DrainTotals{}, fmt.Errorf("progs: drain totals: %w", err)
	}
	return DrainTotals{Records: v[0], Errors: v[1], Sum: v[2]}, nil
}

// NextSequence returns the sequence number the program expects next from
// producer: how many of its records it took, when none was lost.
func (d *UserRingDrain) NextSequence(producer uint32) (uint64, error) {
	if d.next == nil {
		return 0, errors.New("progs: the drain does not check sequences")
	}
	var next uint64
	err := d.next.Lookup(producer, &next)
	return next, err
}

// Close releases the program and its maps, but not the ring.
func (d *UserRingDrain) Close() error {
	var errs []error
	if d.Program != nil {
		errs = append(errs, d.Program.Close())
	}
	for _, m := range []*ebpf.Map{d.totals, d.next} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	return errors.Join(errs...)
}
