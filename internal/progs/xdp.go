//go:build linux

package progs

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// An XDP event is what the XDP capture program sends to user space for
// each packet: the layout below, in host byte order, XDPEventSize bytes.
const (
	XDPEventSeqOff    = 0  // u64 sequence number, from NextSequence
	XDPEventTimeOff   = 8  // u64 bpf_ktime_get_ns() when the program ran: CLOCK_MONOTONIC
	XDPEventLenOff    = 16 // u32 the packet's length
	XDPEventCapLenOff = 20 // u32 bytes of it copied into Data: min(length, XDPCaptureMax)
	XDPEventDataOff   = 24 // the first XDPCaptureMax bytes of the packet

	// XDPCaptureMax is how many leading bytes of each packet an event
	// carries, as in the study the benchmark reproduces.
	XDPCaptureMax = 165
	// XDPEventSize is an event's length as the program submits it.
	XDPEventSize = XDPEventDataOff + XDPCaptureMax
)

// XDP verdicts, from enum xdp_action in include/uapi/linux/bpf.h.
const (
	XDPDrop = 1
	XDPPass = 2
)

// XDPEvent is a decoded XDP event. Data aliases the buffer it was decoded
// from.
type XDPEvent struct {
	Seq    uint64
	Time   uint64 // CLOCK_MONOTONIC nanoseconds
	Len    uint32
	CapLen uint32
	Data   []byte
}

// DecodeXDPEvent decodes an event. It fails if b is shorter than an
// event or claims more captured bytes than an event holds.
func DecodeXDPEvent(b []byte) (XDPEvent, error) {
	if len(b) < XDPEventSize {
		return XDPEvent{}, fmt.Errorf("progs: XDP event of %d bytes, want %d", len(b), XDPEventSize)
	}
	ev := XDPEvent{
		Seq:    binary.NativeEndian.Uint64(b[XDPEventSeqOff:]),
		Time:   binary.NativeEndian.Uint64(b[XDPEventTimeOff:]),
		Len:    binary.NativeEndian.Uint32(b[XDPEventLenOff:]),
		CapLen: binary.NativeEndian.Uint32(b[XDPEventCapLenOff:]),
	}
	if ev.CapLen > XDPCaptureMax {
		return XDPEvent{}, fmt.Errorf("progs: XDP event captured %d bytes, more than %d", ev.CapLen, XDPCaptureMax)
	}
	ev.Data = b[XDPEventDataOff : XDPEventDataOff+ev.CapLen]
	return ev, nil
}

// XDPOutput is where the XDP capture program sends its events.
type XDPOutput uint8

const (
	// XDPNoOutput sends nothing: the program only returns its verdict.
	XDPNoOutput XDPOutput = iota
	// XDPRingbuf reserves each event in a ring buffer and submits it.
	XDPRingbuf
	// XDPPerf writes each event in a per-CPU scratch buffer and sends it
	// with bpf_perf_event_output to the current CPU's perf buffer.
	XDPPerf
)

// String names the output as the tests do: none, ringbuf, perf.
func (o XDPOutput) String() string {
	switch o {
	case XDPNoOutput:
		return "none"
	case XDPRingbuf:
		return "ringbuf"
	case XDPPerf:
		return "perf"
	}
	return fmt.Sprintf("XDPOutput(%d)", uint8(o))
}

// XDPSpec describes an XDP capture program.
type XDPSpec struct {
	// Output chooses the transport, or none.
	Output XDPOutput
	// Map is a BPF_MAP_TYPE_RINGBUF map for XDPRingbuf, a
	// BPF_MAP_TYPE_PERF_EVENT_ARRAY for XDPPerf, nil for XDPNoOutput.
	Map *ebpf.Map
	// Flags go to bpf_ringbuf_submit: 0, NoWakeup or ForceWakeup.
	Flags uint64
	// Verdict is what the program returns for every packet: XDPPass
	// (the zero value means XDPPass too) or XDPDrop.
	Verdict int32
}

// XDPCapture is a loaded XDP capture program and its counters.
type XDPCapture struct {
	// Program is the XDP program; attach it with link.AttachXDP.
	Program *ebpf.Program
	// Counters holds the events numbered and those the program could not
	// deliver (ring full, perf buffer full): read it with ReadCounters.
	Counters *ebpf.Map
	scratch  *ebpf.Map
}

// bpfFCurrentCPU is BPF_F_CURRENT_CPU: the perf buffer of the CPU the
// program runs on. It must be loaded as a 64-bit immediate: a 32-bit -1
// sign-extends into the BPF_F_CTXLEN_MASK bits.
const bpfFCurrentCPU = 0xffffffff

// NewXDPCapture loads an XDP program that, for each packet, numbers an
// event, stamps it with bpf_ktime_get_ns, copies the packet's length and
// first XDPCaptureMax bytes (bpf_xdp_load_bytes) into it and sends it.
func NewXDPCapture(spec XDPSpec) (*XDPCapture, error) {
	switch spec.Output {
	case XDPNoOutput:
	case XDPRingbuf:
		if spec.Map == nil || spec.Map.Type() != ebpf.RingBuf {
			return nil, errors.New("progs: XDP ring buffer output needs a ring buffer map")
		}
	case XDPPerf:
		if spec.Map == nil || spec.Map.Type() != ebpf.PerfEventArray {
			return nil, errors.New("progs: XDP perf output needs a perf event array")
		}
		if spec.Flags != 0 {
			return nil, errors.New("progs: ring buffer flags given for perf output")
		}
	default:
		return nil, fmt.Errorf("progs: unknown %v", spec.Output)
	}
	if spec.Output != XDPNoOutput {
		if err := HaveXDPLoadBytes(); err != nil {
			return nil, err
		}
	}
	if spec.Verdict == 0 {
		spec.Verdict = XDPPass
	}
	c := &XDPCapture{}
	var err error
	if c.Counters, err = NewCounters(); err != nil {
		return nil, err
	}
	if spec.Output == XDPPerf {
		c.scratch, err = ebpf.NewMap(&ebpf.MapSpec{
			Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: (XDPEventSize + 7) &^ 7, MaxEntries: 1,
		})
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("progs: XDP scratch map: %w", err)
		}
	}
	c.Program, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "xdp_capture",
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: c.instructions(spec),
	})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("progs: load XDP capture program with %v output: %w", spec.Output, err)
	}
	return c, nil
}

// Close releases the program and its maps (not spec.Map).
func (c *XDPCapture) Close() error {
	var errs []error
	if c.Program != nil {
		errs = append(errs, c.Program.Close())
	}
	for _, m := range []*ebpf.Map{c.Counters, c.scratch} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	return errors.Join(errs...)
}

// Registers the capture program keeps across helper calls.
const (
	xdpCtx   = asm.R6 // struct xdp_md *
	xdpSeq   = asm.R7 // then the event being written
	xdpEvent = asm.R8
	xdpVal   = asm.R9 // capture time, then the captured length
)

func (c *XDPCapture) instructions(spec XDPSpec) asm.Instructions {
	exit := asm.Instructions{
		asm.Mov.Imm(asm.R0, spec.Verdict).WithSymbol("exit"),
		asm.Return(),
	}
	if spec.Output == XDPNoOutput {
		return exit
	}
	insns := asm.Instructions{
		asm.Mov.Reg(xdpCtx, asm.R1),
		// The capture time first, before anything else costs time.
		asm.FnKtimeGetNs.Call(),
		asm.Mov.Reg(xdpVal, asm.R0),
	}
	insns = append(insns, NextSequence(c.Counters, xdpSeq)...)
	switch spec.Output {
	case XDPRingbuf:
		insns = append(insns,
			asm.LoadMapPtr(asm.R1, spec.Map.FD()),
			asm.Mov.Imm(asm.R2, XDPEventSize),
			asm.Mov.Imm(asm.R3, 0),
			asm.FnRingbufReserve.Call(),
			asm.JEq.Imm(asm.R0, 0, "drop"),
			asm.Mov.Reg(xdpEvent, asm.R0),
		)
	case XDPPerf:
		insns = append(insns, LookupScratch(c.scratch, xdpEvent, "drop")...)
	}
	insns = append(insns,
		asm.StoreMem(xdpEvent, XDPEventSeqOff, xdpSeq, asm.DWord),
		asm.StoreMem(xdpEvent, XDPEventTimeOff, xdpVal, asm.DWord),
		// Length with fragments too, though veth sends none here.
		asm.Mov.Reg(asm.R1, xdpCtx),
		asm.FnXdpGetBuffLen.Call(),
		asm.StoreMem(xdpEvent, XDPEventLenOff, asm.R0, asm.Word),
		asm.Mov.Reg(xdpVal, asm.R0),
		asm.JLE.Imm(xdpVal, XDPCaptureMax, "capped"),
		asm.Mov.Imm(xdpVal, XDPCaptureMax),
		asm.StoreMem(xdpEvent, XDPEventCapLenOff, xdpVal, asm.Word).WithSymbol("capped"),
		// The helper wants a length in [1, size]: the branch above gives
		// the verifier the upper bound, this one the lower.
		asm.JEq.Imm(xdpVal, 0, "send"),
		asm.Mov.Reg(asm.R1, xdpCtx),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Reg(asm.R3, xdpEvent),
		asm.Add.Imm(asm.R3, XDPEventDataOff),
		asm.Mov.Reg(asm.R4, xdpVal),
		asm.FnXdpLoadBytes.Call(),
		asm.JEq.Imm(asm.R0, 0, "send"),
		// The copy failed: say that nothing was captured rather than
		// send stale bytes.
		asm.StoreImm(xdpEvent, XDPEventCapLenOff, 0, asm.Word),
	)
	switch spec.Output {
	case XDPRingbuf:
		insns = append(insns,
			asm.Mov.Reg(asm.R1, xdpEvent).WithSymbol("send"),
			asm.Mov.Imm(asm.R2, int32(spec.Flags)),
			asm.FnRingbufSubmit.Call(),
			asm.Ja.Label("exit"),
		)
	case XDPPerf:
		insns = append(insns,
			asm.Mov.Reg(asm.R1, xdpCtx).WithSymbol("send"),
			asm.LoadMapPtr(asm.R2, spec.Map.FD()),
			asm.LoadImm(asm.R3, bpfFCurrentCPU, asm.DWord),
			asm.Mov.Reg(asm.R4, xdpEvent),
			asm.Mov.Imm(asm.R5, XDPEventSize),
			asm.FnPerfEventOutput.Call(),
			asm.JEq.Imm(asm.R0, 0, "exit"),
		)
	}
	insns = append(insns, CountDrop(c.Counters, "drop")...)
	return append(insns, exit...)
}
