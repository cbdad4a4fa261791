//go:build linux

package xdpbench

import (
	"encoding/binary"

	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// udpDstPortOff is where an event's captured bytes hold the UDP
// destination port: after the Ethernet (14) and IPv4 (20, no options)
// headers and the source port.
const udpDstPortOff = progs.XDPEventDataOff + 14 + 20 + 2

// sink is what every consumer does with an event: stamp its latency,
// check its sequence number, and read one field of the packet, as a
// consumer that looks at what it captured would. It is used by one
// goroutine.
type sink struct {
	latency   Latencies
	seen      seqcheck.Tracker
	delivered uint64
	malformed uint64
	portSum   uint64 // keeps the packet read from being optimised away
}

// event handles one raw event.
func (s *sink) event(b []byte) {
	now := monotonicNow()
	if len(b) < progs.XDPEventSize {
		s.malformed++
		return
	}
	s.latency.Record(now - int64(binary.NativeEndian.Uint64(b[progs.XDPEventTimeOff:])))
	s.seen.Add(binary.NativeEndian.Uint64(b[progs.XDPEventSeqOff:]))
	s.portSum += uint64(binary.BigEndian.Uint16(b[udpDstPortOff:]))
	s.delivered++
}
