//go:build linux

package progs

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Ring buffer flags for bpf_ringbuf_submit, _output and _discard, from
// include/uapi/linux/bpf.h.
const (
	NoWakeup    = 1 << 0 // BPF_RB_NO_WAKEUP: don't wake the consumer
	ForceWakeup = 1 << 1 // BPF_RB_FORCE_WAKEUP: wake it even if it is behind
)

// Method is how a producer puts a record into the ring.
type Method uint8

const (
	// Reserve writes in place: bpf_ringbuf_reserve, then submit or discard.
	Reserve Method = iota
	// Output writes the record in a per-CPU scratch buffer and copies it
	// with bpf_ringbuf_output.
	Output
)

func (m Method) String() string {
	switch m {
	case Reserve:
		return "reserve"
	case Output:
		return "output"
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// RingbufSpec describes a ring buffer producer.
type RingbufSpec struct {
	// Ring is the BPF_MAP_TYPE_RINGBUF map to write to.
	Ring *ebpf.Map
	// Size is each record's length in bytes, at least 8: the first eight
	// hold the record's sequence number, in host byte order.
	Size int
	// Method chooses reserve+submit or output.
	Method Method
	// Flags go to submit, discard or output: 0, NoWakeup or ForceWakeup.
	Flags uint64
	// Pattern fills the rest of the record so a reader can check it: word
	// i holds seq+i, and bytes past the last whole word hold their offset.
	Pattern bool
	// DiscardEvery, with Reserve, discards the records whose sequence
	// number is a multiple of it. Zero discards nothing.
	DiscardEvery uint32
}

// Producer is a loaded producer program and its counters.
type Producer struct {
	// Program is the producer; run it with Run or in a test-run loop.
	Program  *ebpf.Program
	counters *ebpf.Map
	scratch  *ebpf.Map
	spec     RingbufSpec
}

// NewRing creates a ring buffer map of size bytes.
func NewRing(size int) (*ebpf.Map, error) {
	return ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(size)})
}

// NewRingbufProducer loads a program that writes one record per run.
func NewRingbufProducer(spec RingbufSpec) (*Producer, error) {
	if spec.Ring == nil || spec.Ring.Type() != ebpf.RingBuf {
		return nil, errors.New("progs: producer needs a ring buffer map")
	}
	if spec.Size < 8 || spec.Size > 1<<20 {
		return nil, fmt.Errorf("progs: record size %d out of range [8, 1 MiB]", spec.Size)
	}
	if spec.DiscardEvery != 0 && spec.Method != Reserve {
		return nil, errors.New("progs: only reserved records can be discarded")
	}
	p := &Producer{spec: spec}
	var err error
	p.counters, err = NewCounters()
	if err != nil {
		return nil, err
	}
	if spec.Method == Output {
		p.scratch, err = ebpf.NewMap(&ebpf.MapSpec{
			Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(spec.Size+7) &^ 7, MaxEntries: 1,
		})
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("progs: scratch map: %w", err)
		}
	}
	p.Program, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.SocketFilter,
		License:      "GPL",
		Instructions: p.instructions(),
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("progs: load %s producer of %d-byte records: %w", spec.Method, spec.Size, err)
	}
	return p, nil
}

// Registers the producer keeps across helper calls (r6-r9 survive calls).
const (
	regRecord = asm.R6 // the record being written
	regSeq    = asm.R7 // its sequence number
	regTmp    = asm.R8
)

func (p *Producer) instructions() asm.Instructions {
	spec := p.spec
	insns := NextSequence(p.counters, regSeq)
	switch spec.Method {
	case Reserve:
		insns = append(insns,
			asm.LoadMapPtr(asm.R1, spec.Ring.FD()),
			asm.Mov.Imm(asm.R2, int32(spec.Size)),
			asm.Mov.Imm(asm.R3, 0),
			asm.FnRingbufReserve.Call(),
			asm.JEq.Imm(asm.R0, 0, "drop"),
			asm.Mov.Reg(regRecord, asm.R0),
		)
	case Output:
		insns = append(insns, LookupScratch(p.scratch, regRecord, "drop")...)
	}
	insns = append(insns, p.fill()...)
	switch spec.Method {
	case Reserve:
		if spec.DiscardEvery != 0 {
			insns = append(insns,
				asm.Mov.Reg(regTmp, regSeq),
				asm.Mod.Imm(regTmp, int32(spec.DiscardEvery)),
				asm.JEq.Imm(regTmp, 0, "discard"),
			)
		}
		insns = append(insns,
			asm.Mov.Reg(asm.R1, regRecord),
			asm.Mov.Imm(asm.R2, int32(spec.Flags)),
			asm.FnRingbufSubmit.Call(),
			asm.Ja.Label("exit"),
		)
		if spec.DiscardEvery != 0 {
			insns = append(insns,
				asm.Mov.Reg(asm.R1, regRecord).WithSymbol("discard"),
				asm.Mov.Imm(asm.R2, int32(spec.Flags)),
				asm.FnRingbufDiscard.Call(),
				asm.Ja.Label("exit"),
			)
		}
	case Output:
		insns = append(insns,
			asm.LoadMapPtr(asm.R1, spec.Ring.FD()),
			asm.Mov.Reg(asm.R2, regRecord),
			asm.Mov.Imm(asm.R3, int32(spec.Size)),
			asm.Mov.Imm(asm.R4, int32(spec.Flags)),
			asm.FnRingbufOutput.Call(),
			asm.JNE.Imm(asm.R0, 0, "drop"),
			asm.Ja.Label("exit"),
		)
	}
	insns = append(insns, CountDrop(p.counters, "drop")...)
	return append(insns,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
}

// fill writes the sequence number and, with Pattern, the rest of the
// record at regRecord.
func (p *Producer) fill() asm.Instructions {
	insns := asm.Instructions{asm.StoreMem(regRecord, 0, regSeq, asm.DWord)}
	if !p.spec.Pattern {
		return insns
	}
	words := p.spec.Size / 8
	if words > 1 {
		insns = append(insns, asm.Mov.Reg(regTmp, regSeq))
	}
	for i := 1; i < words; i++ {
		insns = append(insns,
			asm.Add.Imm(regTmp, 1),
			asm.StoreMem(regRecord, int16(8*i), regTmp, asm.DWord),
		)
	}
	for off := words * 8; off < p.spec.Size; off++ {
		insns = append(insns, asm.StoreImm(regRecord, int16(off), int64(byte(off)), asm.Byte))
	}
	return insns
}

// Run runs the program at least times times with test-run. It may run more
// often (see the package doc): Counts says how many records were made.
func (p *Producer) Run(times int) error {
	return RunTimes(p.Program, times)
}

// Counts returns how many records the program numbered and how many of
// them it could not put into the ring (reserve or output failed).
func (p *Producer) Counts() (produced, dropped uint64, err error) {
	return ReadCounters(p.counters)
}

// Close releases the program and its maps, but not the ring.
func (p *Producer) Close() error {
	var errs []error
	if p.Program != nil {
		errs = append(errs, p.Program.Close())
	}
	for _, m := range []*ebpf.Map{p.counters, p.scratch} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	return errors.Join(errs...)
}

// CheckRecord checks a record written by a producer with spec's Size and
// Pattern and returns its sequence number.
func CheckRecord(sample []byte, size int, pattern bool) (uint64, error) {
	if len(sample) != size {
		return 0, fmt.Errorf("record of %d bytes, want %d", len(sample), size)
	}
	seq := binary.NativeEndian.Uint64(sample)
	if !pattern {
		return seq, nil
	}
	words := size / 8
	for i := 1; i < words; i++ {
		if got := binary.NativeEndian.Uint64(sample[8*i:]); got != seq+uint64(i) {
			return seq, fmt.Errorf("record %d: word %d is %d, want %d", seq, i, got, seq+uint64(i))
		}
	}
	for off := words * 8; off < size; off++ {
		if sample[off] != byte(off) {
			return seq, fmt.Errorf("record %d: byte %d is %d, want %d", seq, off, sample[off], byte(off))
		}
	}
	return seq, nil
}
