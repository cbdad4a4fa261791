//go:build linux

package progs

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// RingSet is a ring buffer per CPU, or per slot, behind one
// BPF_MAP_TYPE_ARRAY_OF_MAPS: what a producer with RingbufSpec.PerCPU
// writes to, indexing the outer map by the CPU it runs on.
//
// The rings may differ in size: the kernel checks an inner map against
// the outer map's template by type, key and value size and flags, and
// for ring buffers not by max_entries (bpf_map_meta_equal,
// kernel/bpf/map_in_map.c, Linux 5.10+).
type RingSet struct {
	// Outer is the BPF_MAP_TYPE_ARRAY_OF_MAPS; slot i holds Rings[i].
	Outer *ebpf.Map
	// Rings are the ring buffers, in slot order.
	Rings []*ebpf.Map
}

// NewRingSet creates one ring buffer per element of sizes, each that
// many bytes (a power of two, at least a page), and an outer map holding
// ring i in slot i. Give it one size per CPU (ebpf.PossibleCPU) for a
// ring per CPU; a CPU whose slot is missing or empty drops its records.
func NewRingSet(sizes []int) (_ *RingSet, err error) {
	if len(sizes) == 0 {
		return nil, errors.New("progs: a ring set needs at least one ring")
	}
	page := os.Getpagesize()
	for i, size := range sizes {
		if size < page || size&(size-1) != 0 || uint64(size) > 1<<31 {
			return nil, fmt.Errorf("progs: ring %d: %d bytes, want a power of two from %d to 2 GiB", i, size, page)
		}
	}
	s := &RingSet{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.Outer, err = ebpf.NewMap(&ebpf.MapSpec{
		Type:       ebpf.ArrayOfMaps,
		KeySize:    4,
		ValueSize:  4,
		MaxEntries: uint32(len(sizes)),
		InnerMap:   &ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(sizes[0])},
	})
	if err != nil {
		return nil, fmt.Errorf("progs: outer map of %d ring buffers: %w", len(sizes), err)
	}
	for i, size := range sizes {
		ring, err := NewRing(size)
		if err != nil {
			return nil, fmt.Errorf("progs: ring %d of %d bytes: %w", i, size, err)
		}
		s.Rings = append(s.Rings, ring)
		if err := s.Outer.Put(uint32(i), ring); err != nil {
			return nil, fmt.Errorf("progs: put ring %d into the outer map: %w", i, err)
		}
	}
	return s, nil
}

// Close releases the outer map and every ring.
func (s *RingSet) Close() error {
	var errs []error
	if s.Outer != nil {
		errs = append(errs, s.Outer.Close())
	}
	for _, ring := range s.Rings {
		errs = append(errs, ring.Close())
	}
	return errors.Join(errs...)
}

// checkRingSet checks that outer is an array of maps whose filled slots
// hold ring buffers. An outer map with no slot filled says nothing about
// its values: then the verifier decides, when the producer loads.
func checkRingSet(outer *ebpf.Map) error {
	if outer.Type() != ebpf.ArrayOfMaps {
		return fmt.Errorf("progs: per-CPU rings need a %v map indexed by CPU, got %v", ebpf.ArrayOfMaps, outer.Type())
	}
	for slot := range outer.MaxEntries() {
		// From user space, a map-of-maps value reads as the inner map's
		// ID (bpf_map_fd_sys_lookup_elem, kernel/bpf/arraymap.c).
		var id ebpf.MapID
		err := outer.Lookup(slot, &id)
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("progs: look up slot %d of the outer map: %w", slot, err)
		}
		inner, err := ebpf.NewMapFromID(id)
		if err != nil {
			return fmt.Errorf("progs: open the map in slot %d: %w", slot, err)
		}
		typ := inner.Type()
		inner.Close()
		if typ != ebpf.RingBuf {
			return fmt.Errorf("progs: slot %d of the outer map holds a %v map, not a ring buffer", slot, typ)
		}
		// Every slot matches the outer map's template, so one will do.
		return nil
	}
	return nil
}

// lookupCPURing puts into dst the ring in outer's slot for the CPU the
// program runs on, jumping to fail if there is none. It clobbers R0-R5.
func lookupCPURing(outer *ebpf.Map, dst asm.Register, fail string) asm.Instructions {
	insns := asm.Instructions{
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.R10, -8, asm.R0, asm.Word),
	}
	return append(insns, lookupStackKey(outer, -8, dst, fail)...)
}

// testRunOnCPU is BPF_F_TEST_RUN_ON_CPU (include/uapi/linux/bpf.h): run
// the test on the CPU in bpf_attr.test.cpu.
const testRunOnCPU = 1 << 0

// RunOnCPU runs prog, a RawTracepoint program, times times on cpu.
//
// Of the program types tested (TestRunOnCPUProgramTypes), test-run
// honours BPF_F_TEST_RUN_ON_CPU only for raw tracepoints
// (bpf_prog_test_run_raw_tp, net/bpf/test_run.c, Linux 5.10+), and runs
// those once per call: it refuses a repeat count, so this makes a system
// call per run. Socket filter, tc and syscall programs refuse the flag
// (EINVAL), and so does XDP since Linux 5.18, while 5.10 ignores it for
// XDP. Test-run runs all of those on the calling thread's CPU, so pinning
// the thread (cpustat.Pin) chooses their CPU, with a repeat count.
func RunOnCPU(prog *ebpf.Program, cpu, times int) error {
	opts := ebpf.RunOptions{Flags: testRunOnCPU, CPU: uint32(cpu)}
	for range times {
		if _, err := prog.Run(&opts); err != nil {
			return fmt.Errorf("progs: test run on CPU %d: %w", cpu, err)
		}
	}
	return nil
}
