//go:build linux

package progs

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Counters is a one-element array map whose 16-byte value holds two
// counters a program updates atomically: the next sequence number (offset
// 0) and the events it could not deliver (offset 8).
const (
	seqOffset  = 0
	dropOffset = 8
)

// NewCounters creates a counters map for NextSequence and CountDrop.
func NewCounters() (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1})
	if err != nil {
		return nil, fmt.Errorf("progs: counters map: %w", err)
	}
	return m, nil
}

// NewCPUCounters creates counters kept per CPU (a one-element
// BPF_MAP_TYPE_PERCPU_ARRAY of the same 16-byte value): NextSequence and
// CountDrop then count each CPU's events apart without atomics, so
// producers on several CPUs share no cache line, and a sequence number
// says which CPU made it (see CPUOf).
func NewCPUCounters() (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 16, MaxEntries: 1})
	if err != nil {
		return nil, fmt.Errorf("progs: per-CPU counters map: %w", err)
	}
	return m, nil
}

// cpuShift is where a per-CPU sequence number keeps its CPU: the bits
// below count that CPU's events.
const cpuShift = 48

// CPUOf splits a sequence number from per-CPU counters into the CPU that
// made it and that CPU's count.
func CPUOf(seq uint64) (cpu int, n uint64) {
	return int(seq >> cpuShift), seq & (1<<cpuShift - 1)
}

// ReadCounters returns the sequence counter (events numbered) and the drop
// counter of a counters map, summed over the CPUs for per-CPU counters.
func ReadCounters(m *ebpf.Map) (numbered, dropped uint64, err error) {
	perCPU, err := ReadCPUCounters(m)
	for _, c := range perCPU {
		numbered += c[0]
		dropped += c[1]
	}
	return numbered, dropped, err
}

// ReadCPUCounters returns, for each CPU, the events numbered and dropped
// there. Counters not kept per CPU read as one element.
func ReadCPUCounters(m *ebpf.Map) ([][2]uint64, error) {
	var err error
	var v [][2]uint64
	if m.Type() == ebpf.PerCPUArray {
		err = m.Lookup(uint32(0), &v)
	} else {
		v = make([][2]uint64, 1)
		err = m.Lookup(uint32(0), &v[0])
	}
	if err != nil {
		return nil, fmt.Errorf("progs: read counters: %w", err)
	}
	return v, nil
}

// NextSequence loads into dst the next sequence number from counters. On
// kernels with atomic fetch (5.12+, see HaveAtomicFetch) it takes the
// number atomically, so producers on several CPUs never share one; before
// that it loads, adds and stores, which numbers exactly only while one
// producer runs at a time. It clobbers R1, and with per-CPU counters
// (NewCPUCounters) R0-R5: those number each CPU's events from 0, with the
// CPU in the top 16 bits.
func NextSequence(counters *ebpf.Map, dst asm.Register) asm.Instructions {
	if counters.Type() == ebpf.PerCPUArray {
		insns := asm.Instructions{
			asm.FnGetSmpProcessorId.Call(),
			asm.Mov.Reg(dst, asm.R0),
			asm.LSh.Imm(dst, cpuShift),
		}
		insns = append(insns, lookupCPUCounters(counters, 4)...)
		return append(insns,
			asm.LoadMem(asm.R1, asm.R0, seqOffset, asm.DWord),
			asm.Or.Reg(dst, asm.R1),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, seqOffset, asm.R1, asm.DWord),
		)
	}
	if HaveAtomicFetch() != nil {
		return asm.Instructions{
			asm.LoadMapValue(asm.R1, counters.FD(), 0),
			asm.LoadMem(dst, asm.R1, seqOffset, asm.DWord),
			asm.Add.Imm(dst, 1),
			asm.StoreMem(asm.R1, seqOffset, dst, asm.DWord),
			asm.Add.Imm(dst, -1),
		}
	}
	return asm.Instructions{
		asm.LoadMapValue(asm.R1, counters.FD(), 0),
		asm.Mov.Imm(dst, 1),
		Atomic(asm.FetchAdd, asm.R1, dst, asm.DWord, seqOffset),
	}
}

// CountDrop adds one to counters' drop counter, starting at label. It
// clobbers R1 and R2, R0-R5 with per-CPU counters, and falls through.
func CountDrop(counters *ebpf.Map, label string) asm.Instructions {
	if counters.Type() == ebpf.PerCPUArray {
		insns := lookupCPUCounters(counters, 3)
		insns[0] = insns[0].WithSymbol(label)
		return append(insns,
			asm.LoadMem(asm.R1, asm.R0, dropOffset, asm.DWord),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, dropOffset, asm.R1, asm.DWord),
		)
	}
	return asm.Instructions{
		asm.LoadMapValue(asm.R1, counters.FD(), 0).WithSymbol(label),
		asm.Mov.Imm(asm.R2, 1),
		Atomic(asm.AddAtomic, asm.R1, asm.R2, asm.DWord, dropOffset),
	}
}

// LookupScratch points dst at element 0 of a per-CPU scratch array,
// jumping to fail if the lookup fails. It clobbers R0-R5.
func LookupScratch(scratch *ebpf.Map, dst asm.Register, fail string) asm.Instructions {
	insns := asm.Instructions{asm.StoreImm(asm.R10, -4, 0, asm.Word)}
	return append(insns, lookupStackKey(scratch, -4, dst, fail)...)
}

// lookupStackKey points dst at the value of m whose key the program
// stored at keyOffset on its stack, jumping to fail if there is none. It
// clobbers R0-R5.
func lookupStackKey(m *ebpf.Map, keyOffset int32, dst asm.Register, fail string) asm.Instructions {
	return append(callLookup(m, keyOffset),
		asm.JEq.Imm(asm.R0, 0, fail),
		asm.Mov.Reg(dst, asm.R0),
	)
}

// callLookup calls bpf_map_lookup_elem on m with the key the program
// stored at keyOffset on its stack, leaving the value or NULL in R0.
func callLookup(m *ebpf.Map, keyOffset int32) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, keyOffset),
		asm.FnMapLookupElem.Call(),
	}
}

// cpuCountersKey is the stack slot of the per-CPU counters' key, apart
// from the slots LookupScratch (-4) and lookupCPURing (-8) use.
const cpuCountersKey = -16

// lookupCPUCounters leaves in R0 this CPU's element of per-CPU counters
// and skips the next skip instructions if there is none, which cannot
// happen for element 0 but the verifier wants the check. It clobbers
// R0-R5. A raw offset, not a label: the caller's next instructions are
// not this function's to name.
func lookupCPUCounters(counters *ebpf.Map, skip int16) asm.Instructions {
	insns := asm.Instructions{asm.StoreImm(asm.R10, cpuCountersKey, 0, asm.Word)}
	insns = append(insns, callLookup(counters, cpuCountersKey)...)
	ifNull := asm.JEq.Imm(asm.R0, 0, "")
	ifNull.Offset = skip
	return append(insns, ifNull)
}

// testInput is the smallest packet test-run accepts for socket filters
// (an Ethernet header) with room to spare.
var testInput = make([]byte, 64)

// RunTimes runs prog at least times times with test-run, in chunks so a
// large count is not one syscall the kernel restarts from zero when the
// thread gets a signal. For a count a test compares, use RunExactly.
func RunTimes(prog *ebpf.Program, times int) error {
	return runChunks(prog, times, 1<<16)
}

// RunExactly runs prog exactly times times, one syscall a run. A test run
// a signal interrupts fails with EINTR after some repetitions and
// cilium/ebpf runs it again from the start; with Repeat 1 the kernel checks
// that it is done before it checks for signals, so no run repeats.
func RunExactly(prog *ebpf.Program, times int) error {
	return runChunks(prog, times, 1)
}

func runChunks(prog *ebpf.Program, times, chunk int) error {
	for times > 0 {
		n := min(times, chunk)
		if _, err := prog.Run(&ebpf.RunOptions{Data: testInput, Repeat: uint32(n)}); err != nil {
			return fmt.Errorf("progs: test run: %w", err)
		}
		times -= n
	}
	return nil
}
