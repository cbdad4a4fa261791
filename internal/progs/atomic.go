//go:build linux

// Package progs builds the BPF programs that tests and benchmarks run:
// ring buffer producers and the helpers they share, written with
// cilium/ebpf's asm package so no C compiler is needed.
//
// Every producer numbers its records itself, with an atomic counter in a
// map: cilium/ebpf's Program.Run may run a program more often than asked
// (it restarts an interrupted test run), so the counters, not the repeat
// count, say what was produced and what was dropped.
package progs

import "github.com/cilium/ebpf/asm"

// Atomic returns the atomic instruction op on size bytes at dst+offset with
// src, working around cilium/ebpf v0.22.0's asm, which leaves the
// instruction's immediate at zero when it marshals it. The kernel reads the
// operation from that immediate (BPF_ADD, BPF_AND, ... | BPF_FETCH,
// BPF_XCHG, BPF_CMPXCHG: include/uapi/linux/bpf.h), so without this every
// atomic runs as a plain add that fetches nothing. The immediate is the
// operation's bits above the low byte of asm's encoding.
func Atomic(op asm.AtomicOp, dst, src asm.Register, size asm.Size, offset int16) asm.Instruction {
	ins := op.Mem(dst, src, size, offset)
	ins.Constant = int64(op >> 8)
	return ins
}
