//go:build linux

package progs

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// PerfSpec describes a producer that sends its records with
// bpf_perf_event_output to the perf buffer of the CPU it runs on.
type PerfSpec struct {
	// Events is the BPF_MAP_TYPE_PERF_EVENT_ARRAY to write to. A reader
	// (perf.NewReader) must be open on it, or there is no buffer to take
	// the record and the helper fails with ENOENT.
	Events *ebpf.Map
	// Size is each record's length in bytes, at least 8: the first eight
	// hold the sequence number, as in RingbufSpec.
	Size int
	// Pattern fills the rest of the record as RingbufSpec.Pattern does.
	Pattern bool
}

// NewPerfProducer loads a tc (BPF_PROG_TYPE_SCHED_CLS) program that
// writes one record per run: bpf_perf_event_output is a helper of
// networking and tracing programs, not of socket filters
// (tc_cls_act_func_proto in net/core/filter.c, Linux 6.18). A record the
// helper cannot place (the buffer is full, ENOSPC) counts as dropped.
func NewPerfProducer(spec PerfSpec) (*Producer, error) {
	if spec.Events == nil || spec.Events.Type() != ebpf.PerfEventArray {
		return nil, errors.New("progs: perf producer needs a perf event array")
	}
	if err := checkRecordSize(spec.Size); err != nil {
		return nil, err
	}
	p := &Producer{spec: RingbufSpec{Size: spec.Size, Pattern: spec.Pattern}}
	if err := p.newMaps(); err != nil {
		return nil, err
	}
	insns := asm.Instructions{
		// The helper wants the context; r1 goes to NextSequence.
		asm.Mov.Reg(regCtx, asm.R1),
	}
	insns = append(insns, NextSequence(p.counters, regSeq)...)
	insns = append(insns, LookupScratch(p.scratch, regRecord, "drop")...)
	insns = append(insns, p.fill()...)
	insns = append(insns,
		asm.Mov.Reg(asm.R1, regCtx),
		asm.LoadMapPtr(asm.R2, spec.Events.FD()),
		asm.LoadImm(asm.R3, bpfFCurrentCPU, asm.DWord),
		asm.Mov.Reg(asm.R4, regRecord),
		asm.Mov.Imm(asm.R5, int32(spec.Size)),
		asm.FnPerfEventOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
	)
	if err := p.load(ebpf.SchedCLS, "perf", insns); err != nil {
		return nil, err
	}
	return p, nil
}

// regCtx holds the program's context where a helper needs it after other
// calls.
const regCtx = asm.R9

// checkRecordSize checks a record size for the producers of this package.
func checkRecordSize(size int) error {
	if size < 8 || size > 1<<20 {
		return fmt.Errorf("progs: record size %d out of range [8, 1 MiB]", size)
	}
	return nil
}

// newMaps creates the counters and a per-CPU scratch buffer of one record
// for producers that build the record before handing it to a helper.
func (p *Producer) newMaps() error {
	err := p.newCounters()
	if err != nil {
		return err
	}
	p.scratch, err = newScratch(p.spec.Size)
	if err != nil {
		p.Close()
		return err
	}
	return nil
}

// newScratch creates a per-CPU array of one size-byte element.
func newScratch(size int) (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(size+7) &^ 7, MaxEntries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("progs: scratch map: %w", err)
	}
	return m, nil
}

// load ends insns with the drop counter and the exit every producer
// shares, and loads the program.
func (p *Producer) load(typ ebpf.ProgramType, what string, insns asm.Instructions) error {
	insns = append(insns, CountDrop(p.counters, "drop")...)
	insns = append(insns,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
	var err error
	p.Program, err = ebpf.NewProgram(&ebpf.ProgramSpec{Type: typ, License: "GPL", Instructions: insns})
	if err != nil {
		p.Close()
		return fmt.Errorf("progs: load %s producer of %d-byte records: %w", what, p.spec.Size, err)
	}
	return nil
}
