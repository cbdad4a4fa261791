//go:build linux

package progs

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// NewQueue creates a BPF_MAP_TYPE_QUEUE map of entries values of size
// bytes. The kernel allocates all of it up front (queue_stack_map_alloc,
// kernel/bpf/queue_stack_maps.c).
func NewQueue(size, entries int) (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Queue, ValueSize: uint32(size), MaxEntries: uint32(entries)})
	if err != nil {
		return nil, fmt.Errorf("progs: queue of %d %d-byte values: %w", entries, size, err)
	}
	return m, nil
}

// QueueSpec describes a producer that pushes its records into a queue
// map with bpf_map_push_elem.
type QueueSpec struct {
	// Queue is the BPF_MAP_TYPE_QUEUE map, its values Size bytes long.
	Queue *ebpf.Map
	// Size is each record's length in bytes, at least 8: the first eight
	// hold the sequence number, as in RingbufSpec.
	Size int
	// Pattern fills the rest of the record as RingbufSpec.Pattern does.
	Pattern bool
}

// NewQueueProducer loads a socket filter that pushes one record per run,
// with flags 0: a full queue refuses the record (E2BIG) and the program
// counts it as dropped, where BPF_EXIST would silently evict the oldest.
func NewQueueProducer(spec QueueSpec) (*Producer, error) {
	if spec.Queue == nil || spec.Queue.Type() != ebpf.Queue {
		return nil, errors.New("progs: queue producer needs a queue map")
	}
	if err := checkRecordSize(spec.Size); err != nil {
		return nil, err
	}
	if int(spec.Queue.ValueSize()) != spec.Size {
		return nil, fmt.Errorf("progs: queue holds %d-byte values, records are %d", spec.Queue.ValueSize(), spec.Size)
	}
	p := &Producer{spec: RingbufSpec{Size: spec.Size, Pattern: spec.Pattern}}
	if err := p.newMaps(); err != nil {
		return nil, err
	}
	insns := NextSequence(p.counters, regSeq)
	insns = append(insns, LookupScratch(p.scratch, regRecord, "drop")...)
	insns = append(insns, p.fill()...)
	insns = append(insns,
		asm.LoadMapPtr(asm.R1, spec.Queue.FD()),
		asm.Mov.Reg(asm.R2, regRecord),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnMapPushElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
	)
	if err := p.load(ebpf.SocketFilter, "queue", insns); err != nil {
		return nil, err
	}
	return p, nil
}

// QueueDrainer is a program that pops one value off a queue per run and
// throws it away: it empties a queue at the cost of a helper call per
// value, where user space pays a system call per value.
type QueueDrainer struct {
	// Program pops one value per run and returns 0, or 1 once the queue
	// is empty.
	Program *ebpf.Program
	scratch *ebpf.Map
}

// NewQueueDrainer loads a drainer for queue.
func NewQueueDrainer(queue *ebpf.Map) (*QueueDrainer, error) {
	d := &QueueDrainer{}
	var err error
	if d.scratch, err = newScratch(int(queue.ValueSize())); err != nil {
		return nil, err
	}
	insns := LookupScratch(d.scratch, asm.R2, "empty")
	insns = append(insns,
		asm.LoadMapPtr(asm.R1, queue.FD()),
		asm.FnMapPopElem.Call(),
		asm.JNE.Imm(asm.R0, 0, "empty"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 1).WithSymbol("empty"),
		asm.Return(),
	)
	d.Program, err = ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, License: "GPL", Instructions: insns})
	if err != nil {
		d.scratch.Close()
		return nil, fmt.Errorf("progs: load queue drainer: %w", err)
	}
	return d, nil
}

// Drain pops at least n values, or until the queue is empty.
func (d *QueueDrainer) Drain(n int) error { return RunTimes(d.Program, n) }

// Close releases the program and its scratch map, not the queue.
func (d *QueueDrainer) Close() error {
	return errors.Join(d.Program.Close(), d.scratch.Close())
}
