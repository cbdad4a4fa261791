//go:build linux

package progs

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// udpHeaderLen is the size of a UDP header. A socket filter on a UDP
// socket runs with the packet's data starting at the UDP header (the IP
// header is already pulled: see TestSocketFilterSeesUDPHeader), so a
// datagram with no payload is exactly this long.
const udpHeaderLen = 8

// skbLenOffset is the offset of __sk_buff.len, the first field of the
// context a socket filter gets (include/uapi/linux/bpf.h).
const skbLenOffset = 0

// NewDropEmptyUDP loads a socket filter (BPF_PROG_TYPE_SOCKET_FILTER) for
// UDP sockets that drops datagrams with no payload and keeps the rest
// whole. It counts in counters (see NewCounters): kept datagrams in the
// first counter, dropped ones in the drop counter, both atomically, as
// several CPUs run the filter at once.
func NewDropEmptyUDP(counters *ebpf.Map) (*ebpf.Program, error) {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, skbLenOffset, asm.Word),
		asm.JGT.Imm(asm.R2, udpHeaderLen, "keep"),
	}
	insns = append(insns, CountDrop(counters, "drop")...)
	insns = append(insns,
		// A socket filter returns how many bytes to keep: 0 drops.
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),

		asm.LoadMapValue(asm.R1, counters.FD(), 0).WithSymbol("keep"),
		asm.Mov.Imm(asm.R3, 1),
		Atomic(asm.AddAtomic, asm.R1, asm.R3, asm.DWord, seqOffset),
		asm.Mov.Reg(asm.R0, asm.R2),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "drop_empty_udp",
		Type:         ebpf.SocketFilter,
		License:      "GPL",
		Instructions: insns,
	})
	if err != nil {
		return nil, fmt.Errorf("progs: load socket filter: %w", err)
	}
	return prog, nil
}
