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
	// Ring is the BPF_MAP_TYPE_RINGBUF map to write to, shared by every
	// CPU. Set either Ring or PerCPU.
	Ring *ebpf.Map
	// PerCPU, instead of Ring, is a BPF_MAP_TYPE_ARRAY_OF_MAPS whose
	// values are ring buffers (RingSet.Outer): each run writes to the
	// ring in the slot of the CPU it runs on, and counts the record as
	// dropped if that slot is empty or out of range.
	PerCPU *ebpf.Map
	// Type is the program type, SocketFilter if zero. A RawTracepoint
	// producer can be run on a chosen CPU with RunOnCPU; a socket filter
	// runs where the calling thread runs (see RunOnCPU).
	Type ebpf.ProgramType
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
	// CPUSequence numbers each CPU's records apart, in per-CPU counters
	// (NewCPUCounters): no atomic, no cache line shared between
	// producers on different CPUs, and the sequence number names the
	// CPU (CPUOf). Without it one counter numbers every record.
	CPUSequence bool
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
	if err := checkRingTarget(spec); err != nil {
		return nil, err
	}
	if err := checkRecordSize(spec.Size); err != nil {
		return nil, err
	}
	if spec.DiscardEvery != 0 && spec.Method != Reserve {
		return nil, errors.New("progs: only reserved records can be discarded")
	}
	if spec.Type == ebpf.UnspecifiedProgram {
		spec.Type = ebpf.SocketFilter
	}
	p := &Producer{spec: spec}
	var err error
	if spec.Method == Output {
		err = p.newMaps()
	} else {
		err = p.newCounters()
	}
	if err != nil {
		return nil, err
	}
	what := spec.Method.String()
	if spec.PerCPU != nil {
		what = "per-CPU " + what
	}
	if err := p.load(spec.Type, what, p.instructions()); err != nil {
		if spec.PerCPU != nil {
			return nil, fmt.Errorf("%w (the verifier checks that the outer map's values are ring buffers)", err)
		}
		return nil, err
	}
	return p, nil
}

// checkRingTarget checks that spec names one place to write to: a ring
// buffer, or a map of ring buffers.
func checkRingTarget(spec RingbufSpec) error {
	switch {
	case spec.Ring != nil && spec.PerCPU != nil:
		return errors.New("progs: producer given both a shared ring and per-CPU rings")
	case spec.PerCPU != nil:
		return checkRingSet(spec.PerCPU)
	case spec.Ring == nil || spec.Ring.Type() != ebpf.RingBuf:
		return errors.New("progs: producer needs a ring buffer map")
	}
	return nil
}

// Registers the producer keeps across helper calls (r6-r9 survive calls).
const (
	regRecord = asm.R6 // the record being written
	regSeq    = asm.R7 // its sequence number
	regTmp    = asm.R8
	regRing   = asm.R9 // the per-CPU producer's ring
)

func (p *Producer) instructions() asm.Instructions {
	spec := p.spec
	// Number the record first: one the program cannot place still counts
	// as produced, and as dropped.
	insns := NextSequence(p.counters, regSeq)
	if spec.PerCPU != nil {
		insns = append(insns, lookupCPURing(spec.PerCPU, regRing, "drop")...)
	}
	switch spec.Method {
	case Reserve:
		insns = append(insns,
			p.loadRing(asm.R1),
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
			p.loadRing(asm.R1),
			asm.Mov.Reg(asm.R2, regRecord),
			asm.Mov.Imm(asm.R3, int32(spec.Size)),
			asm.Mov.Imm(asm.R4, int32(spec.Flags)),
			asm.FnRingbufOutput.Call(),
			asm.JNE.Imm(asm.R0, 0, "drop"),
			asm.Ja.Label("exit"),
		)
	}
	return insns
}

// loadRing puts the map to write to into dst: the shared ring, or the
// ring lookupCPURing found.
func (p *Producer) loadRing(dst asm.Register) asm.Instruction {
	if p.spec.PerCPU != nil {
		return asm.Mov.Reg(dst, regRing)
	}
	return asm.LoadMapPtr(dst, p.spec.Ring.FD())
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

// RunExactly runs the program exactly times times, one test run a time:
// slower than Run, for a count a test compares with what it read.
func (p *Producer) RunExactly(times int) error {
	return RunExactly(p.Program, times)
}

// Fill runs the program as Run does and returns how many records that
// placed in the buffer, and the number of the first: the runs that made
// them, more than times if test-run restarted, less those dropped on a
// full buffer. Records that made it carry consecutive numbers.
func (p *Producer) Fill(times int) (placed int, first uint64, err error) {
	first, droppedBefore, err := p.Counts()
	if err == nil {
		err = p.Run(times)
	}
	if err != nil {
		return 0, 0, err
	}
	after, dropped, err := p.Counts()
	if err != nil {
		return 0, 0, err
	}
	return int((after - first) - (dropped - droppedBefore)), first, nil
}

// Counts returns how many records the program numbered and how many of
// them it could not put into the ring (reserve or output failed).
func (p *Producer) Counts() (produced, dropped uint64, err error) {
	return ReadCounters(p.counters)
}

// CPUCounts returns Counts for each CPU, with RingbufSpec.CPUSequence;
// without it, one element for all of them.
func (p *Producer) CPUCounts() ([][2]uint64, error) {
	return ReadCPUCounters(p.counters)
}

// newCounters creates the counters the spec asks for.
func (p *Producer) newCounters() (err error) {
	if p.spec.CPUSequence {
		p.counters, err = NewCPUCounters()
	} else {
		p.counters, err = NewCounters()
	}
	return err
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
