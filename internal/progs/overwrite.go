//go:build linux

package progs

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// RBOverwrite is the map flag BPF_F_RB_OVERWRITE, (1U << 19) in
// include/uapi/linux/bpf.h since Linux 6.19: a ring buffer whose producer
// overwrites the oldest records when it is full.
const RBOverwrite = 1 << 19

// NewOverwriteRing creates a ring buffer of size bytes in overwrite mode.
// Where the kernel refuses the flag (before 6.19: EINVAL) but has ring
// buffers, the error wraps ebpf.ErrNotSupported and names the kernel.
func NewOverwriteRing(size int) (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(size), Flags: RBOverwrite})
	if !errors.Is(err, unix.EINVAL) {
		return m, err
	}
	plain, plainErr := NewRing(size)
	if plainErr != nil {
		return nil, plainErr // no ring buffers at all, or a bad size
	}
	plain.Close()
	return nil, fmt.Errorf("overwrite-mode ring buffers (BPF_F_RB_OVERWRITE) need Linux 6.19+, kernel %s: %v: %w",
		kernelRelease(), err, ebpf.ErrNotSupported)
}

// overwriteMix is the multiplier of the overwrite producer's words (the
// 64-bit golden ratio): each word depends on the record's sequence number,
// so that halves of two records never pass for one.
const overwriteMix uint64 = 0x9e3779b97f4a7c15

// mixImm is overwriteMix as the signed immediate of a 64-bit load (a
// variable: Go refuses to convert the constant, which overflows int64).
var mixImm = func(mix uint64) int64 { return int64(mix) }(overwriteMix)

// NewOverwriteProducer loads a program that writes one record of size
// bytes per run into ring (any ring buffer; an overwrite-mode one is what
// it is for), submitted with BPF_RB_NO_WAKEUP as an overwrite ring's
// producers do. Records are numbered per CPU (RingbufSpec.CPUSequence, so
// CPUOf names the CPU); word 0 holds the number, word i, up to the
// second last, word i-1 times overwriteMix plus i, and the last word the
// XOR of all the others: CheckOverwriteRecord checks both. size is a
// multiple of 8, at least 16.
func NewOverwriteProducer(ring *ebpf.Map, size int) (*Producer, error) {
	if size < 16 || size%8 != 0 {
		return nil, fmt.Errorf("progs: overwrite record size %d is not a multiple of 8 of at least 16", size)
	}
	spec := RingbufSpec{Ring: ring, Size: size, Flags: NoWakeup, CPUSequence: true}
	if err := checkRingTarget(spec); err != nil {
		return nil, err
	}
	if err := checkRecordSize(size); err != nil {
		return nil, err
	}
	p := &Producer{spec: spec}
	if err := p.newCounters(); err != nil {
		return nil, err
	}
	if err := p.load(ebpf.SocketFilter, "overwrite", p.overwriteInstructions()); err != nil {
		return nil, err
	}
	return p, nil
}

// Registers of the overwrite producer besides regRecord and regSeq.
const (
	regWord     = asm.R8 // the word being written
	regChecksum = asm.R9 // the XOR of the words written
	regMix      = asm.R1 // overwriteMix, once the reserve call is done
)

func (p *Producer) overwriteInstructions() asm.Instructions {
	words := p.spec.Size / 8
	insns := NextSequence(p.counters, regSeq)
	insns = append(insns,
		asm.LoadMapPtr(asm.R1, p.spec.Ring.FD()),
		asm.Mov.Imm(asm.R2, int32(p.spec.Size)),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "drop"),
		asm.Mov.Reg(regRecord, asm.R0),
		asm.StoreMem(regRecord, 0, regSeq, asm.DWord),
		asm.Mov.Reg(regWord, regSeq),
		asm.Mov.Reg(regChecksum, regSeq),
		asm.LoadImm(regMix, mixImm, asm.DWord),
	)
	for i := 1; i < words-1; i++ {
		insns = append(insns,
			asm.Mul.Reg(regWord, regMix),
			asm.Add.Imm(regWord, int32(i)),
			asm.StoreMem(regRecord, int16(8*i), regWord, asm.DWord),
			asm.Xor.Reg(regChecksum, regWord),
		)
	}
	return append(insns,
		asm.StoreMem(regRecord, int16(8*(words-1)), regChecksum, asm.DWord),
		asm.Mov.Reg(asm.R1, regRecord),
		asm.Mov.Imm(asm.R2, NoWakeup),
		asm.FnRingbufSubmit.Call(),
		asm.Ja.Label("exit"),
	)
}

// AppendOverwriteRecord appends to b the record of size bytes that
// NewOverwriteProducer writes as number seq: what a test's Go producer
// writes into a ring of its own.
func AppendOverwriteRecord(b []byte, seq uint64, size int) []byte {
	word, checksum := seq, seq
	b = binary.NativeEndian.AppendUint64(b, seq)
	for i := 1; i < size/8-1; i++ {
		word = word*overwriteMix + uint64(i)
		b = binary.NativeEndian.AppendUint64(b, word)
		checksum ^= word
	}
	return binary.NativeEndian.AppendUint64(b, checksum)
}

// CheckOverwriteRecord checks a record of NewOverwriteProducer's, size
// bytes, word by word and by its checksum, and returns its sequence
// number.
func CheckOverwriteRecord(sample []byte, size int) (uint64, error) {
	if len(sample) != size {
		return 0, fmt.Errorf("record of %d bytes, want %d", len(sample), size)
	}
	words := size / 8
	seq := binary.NativeEndian.Uint64(sample)
	word, checksum := seq, seq
	for i := 1; i < words-1; i++ {
		word = word*overwriteMix + uint64(i)
		if got := binary.NativeEndian.Uint64(sample[8*i:]); got != word {
			return seq, fmt.Errorf("record %#x: word %d is %#x, want %#x", seq, i, got, word)
		}
		checksum ^= word
	}
	if got := binary.NativeEndian.Uint64(sample[8*(words-1):]); got != checksum {
		return seq, fmt.Errorf("record %#x: checksum %#x, want %#x", seq, got, checksum)
	}
	return seq, nil
}
