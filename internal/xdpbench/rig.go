//go:build linux

// Package xdpbench measures how XDP packet events reach user space under
// real traffic: a UDP flood between two network namespaces, an XDP
// program on the receiving veth that sends each packet's timestamp,
// length and first bytes to a ring buffer or a perf buffer, and one of
// several consumer strategies. It reports what the study it reproduces
// reported (rates, loss, CPU) plus per-packet latency percentiles.
package xdpbench

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/ebpf-zc/ebpf/internal/netns"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// Mode is how an XDP program is attached.
type Mode string

// Attach modes. Auto tries native first and falls back to generic.
const (
	Auto    Mode = ""
	Native  Mode = "native"
	Generic Mode = "generic"
)

// Capture is a namespace pair with the capture program attached to B's
// veth: every packet from A to B produces an event in Events.
type Capture struct {
	// Pair is the namespaces; send from Pair.A to Pair.B.
	Pair *netns.Pair
	// Events is the ring buffer or perf event array; nil for the
	// baseline.
	Events *ebpf.Map
	// Program is the loaded program and its counters.
	Program *progs.XDPCapture
	// Mode is how the program was attached.
	Mode Mode
	link link.Link
}

// NewCapture builds the namespaces, the event map (a ring of ringSize
// bytes, or a perf event array) and the program for st, and attaches it
// to B's veth in the given mode. Close undoes all of it.
func NewCapture(st Strategy, ringSize int, mode Mode) (_ *Capture, err error) {
	r := &Capture{}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Close())
		}
	}()
	if r.Pair, err = netns.NewPair(); err != nil {
		return nil, err
	}
	switch st.Output {
	case progs.XDPRingbuf:
		r.Events, err = progs.NewRing(ringSize)
	case progs.XDPPerf:
		// MaxEntries 0: cilium/ebpf sizes it for every possible CPU.
		r.Events, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
	}
	if err != nil {
		return nil, fmt.Errorf("xdpbench: event map: %w", err)
	}
	if r.Program, err = progs.NewXDPCapture(progs.XDPSpec{Output: st.Output, Map: r.Events, Flags: st.Flags}); err != nil {
		return nil, err
	}
	if err := r.attach(mode); err != nil {
		return nil, err
	}
	return r, nil
}

// attach links the program to B's veth from inside B, where the
// interface index means that interface.
func (r *Capture) attach(mode Mode) error {
	tries := []Mode{Native, Generic}
	switch mode {
	case Auto:
	case Native, Generic:
		tries = []Mode{mode}
	default:
		return fmt.Errorf("xdpbench: unknown XDP mode %q", mode)
	}
	var errs []error
	for _, m := range tries {
		flags := link.XDPDriverMode
		if m == Generic {
			flags = link.XDPGenericMode
		}
		err := r.Pair.B.Do(func() (err error) {
			r.link, err = link.AttachXDP(link.XDPOptions{
				Program: r.Program.Program, Interface: r.Pair.B.Index, Flags: flags,
			})
			return err
		})
		if err == nil {
			r.Mode = m
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", m, err))
	}
	return fmt.Errorf("xdpbench: attach XDP to %s: %w", r.Pair.B.Interface, errors.Join(errs...))
}

// vethDrops returns the packets the veth link dropped so far, at either
// end: when the receive side falls behind, the sender's veth finds the
// peer's queue full and drops before any XDP program sees the packet.
func (r *Capture) vethDrops() (uint64, error) {
	a, err := r.Pair.A.Stats()
	if err != nil {
		return 0, err
	}
	b, err := r.Pair.B.Stats()
	if err != nil {
		return 0, err
	}
	return a.TxDropped + a.RxDropped + b.TxDropped + b.RxDropped, nil
}

// Close detaches the program and removes the maps and the namespaces.
func (r *Capture) Close() error {
	var errs []error
	if r.link != nil {
		errs = append(errs, r.link.Close())
	}
	if r.Program != nil {
		errs = append(errs, r.Program.Close())
	}
	if r.Events != nil {
		errs = append(errs, r.Events.Close())
	}
	if r.Pair != nil {
		errs = append(errs, r.Pair.Close())
	}
	return errors.Join(errs...)
}
