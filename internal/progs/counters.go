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

// ReadCounters returns the sequence counter (events numbered) and the drop
// counter of a counters map.
func ReadCounters(m *ebpf.Map) (numbered, dropped uint64, err error) {
	var v [2]uint64
	if err := m.Lookup(uint32(0), &v); err != nil {
		return 0, 0, fmt.Errorf("progs: read counters: %w", err)
	}
	return v[0], v[1], nil
}

// NextSequence loads into dst the next sequence number from counters. On
// kernels with atomic fetch (5.12+, see HaveAtomicFetch) it takes the
// number atomically, so producers on several CPUs never share one; before
// that it loads, adds and stores, which numbers exactly only while one
// producer runs at a time. It clobbers R1.
func NextSequence(counters *ebpf.Map, dst asm.Register) asm.Instructions {
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
// clobbers R1 and R2 and falls through.
func CountDrop(counters *ebpf.Map, label string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapValue(asm.R1, counters.FD(), 0).WithSymbol(label),
		asm.Mov.Imm(asm.R2, 1),
		Atomic(asm.AddAtomic, asm.R1, asm.R2, asm.DWord, dropOffset),
	}
}

// LookupScratch points dst at element 0 of a per-CPU scratch array,
// jumping to fail if the lookup fails. It clobbers R0-R5.
func LookupScratch(scratch *ebpf.Map, dst asm.Register, fail string) asm.Instructions {
	return asm.Instructions{
		asm.StoreImm(asm.R10, -4, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, scratch.FD()),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, fail),
		asm.Mov.Reg(dst, asm.R0),
	}
}

// testInput is the smallest packet test-run accepts for socket filters
// (an Ethernet header) with room to spare.
var testInput = make([]byte, 64)

// RunTimes runs prog at least times times with test-run, in chunks so a
// large count is not one syscall the kernel restarts from zero when the
// thread gets a signal.
func RunTimes(prog *ebpf.Program, times int) error {
	const chunk = 1 << 16
	for times > 0 {
		n := min(times, chunk)
		if _, err := prog.Run(&ebpf.RunOptions{Data: testInput, Repeat: uint32(n)}); err != nil {
			return fmt.Errorf("progs: test run: %w", err)
		}
		times -= n
	}
	return nil
}
