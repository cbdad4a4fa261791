//go:build linux

package progs

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/sockfilterbench"
)

// TestSocketFilterSeesUDPHeader checks, with real sockets, where a socket
// filter on a UDP socket finds the UDP header: at offset 0, with the IP
// header already pulled, so skb->len is 8 plus the payload. NewDropEmptyUDP
// depends on it.
func TestSocketFilterSeesUDPHeader(t *testing.T) {
	seen, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 24, MaxEntries: 1})
	skipIfNoBPF(t, err)
	defer seen.Close()
	// Record the 16-bit words at offsets 2 and 4 (a UDP header's
	// destination port and length) and skb->len, then keep the packet.
	probe, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.SocketFilter,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Reg(asm.R6, asm.R1),
			asm.LoadAbs(2, asm.Half),
			asm.Mov.Reg(asm.R7, asm.R0),
			asm.LoadAbs(4, asm.Half),
			asm.Mov.Reg(asm.R8, asm.R0),
			asm.LoadMem(asm.R9, asm.R6, skbLenOffset, asm.Word),
			asm.LoadMapValue(asm.R1, seen.FD(), 0),
			asm.StoreMem(asm.R1, 0, asm.R7, asm.DWord),
			asm.StoreMem(asm.R1, 8, asm.R8, asm.DWord),
			asm.StoreMem(asm.R1, 16, asm.R9, asm.DWord),
			asm.Mov.Reg(asm.R0, asm.R9),
			asm.Return(),
		},
	})
	skipIfNoBPF(t, err)
	defer probe.Close()

	server, port, err := sockfilterbench.Listen(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(server)
	if err := sockfilterbench.AttachFilter(server, probe.FD()); err != nil {
		t.Fatal(err)
	}
	client, err := sockfilterbench.Dial(port)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(client)

	const payload = 5
	if _, err := unix.Write(client, make([]byte, payload)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _, err := unix.Recvfrom(server, buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != payload {
		t.Fatalf("server read %d bytes, want %d", n, payload)
	}
	var got [3]uint64
	if err := seen.Lookup(uint32(0), &got); err != nil {
		t.Fatal(err)
	}
	want := [3]uint64{uint64(port), udpHeaderLen + payload, udpHeaderLen + payload}
	if got != want {
		t.Fatalf("filter saw port, UDP length, skb->len = %v, want %v: the UDP header is not at offset 0", got, want)
	}
}
