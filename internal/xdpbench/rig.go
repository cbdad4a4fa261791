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

// rig is the namespaces, the map, the program and its attachment.
type rig struct {
	pair    *netns.Pair
	events  *ebpf.Map // ring buffer or perf event array; nil for none
	capture *progs.XDPCapture
	link    link.Link
	mode    Mode
}

// newRig builds the namespaces and attaches the program for st to B's
// veth.
func newRig(st Strategy, ringSize int, mode Mode) (_ *rig, err error) {
	r := &rig{}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	if r.pair, err = netns.NewPair(); err != nil {
		return nil, err
	}
	switch st.Output {
	case progs.XDPRingbuf:
		r.events, err = progs.NewRing(ringSize)
	case progs.XDPPerf:
		// MaxEntries 0: cilium/ebpf sizes it for every possible CPU.
		r.events, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
	}
	if err != nil {
		return nil, fmt.Errorf("xdpbench: event map: %w", err)
	}
	if r.capture, err = progs.NewXDPCapture(progs.XDPSpec{Output: st.Output, Map: r.events, Flags: st.Flags}); err != nil {
		return nil, err
	}
	if err := r.attach(mode); err != nil {
		return nil, err
	}
	return r, nil
}

// attach links the program to B's veth from inside B, where the
// interface index means that interface.
func (r *rig) attach(mode Mode) error {
	tries := []Mode{Native, Generic}
	if mode != Auto {
		tries = []Mode{mode}
	}
	var errs []error
	for _, m := range tries {
		flags := link.XDPDriverMode
		if m == Generic {
			flags = link.XDPGenericMode
		}
		err := r.pair.B.Do(func() (err error) {
			r.link, err = link.AttachXDP(link.XDPOptions{
				Program: r.capture.Program, Interface: r.pair.B.Index, Flags: flags,
			})
			return err
		})
		if err == nil {
			r.mode = m
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", m, err))
	}
	return fmt.Errorf("xdpbench: attach XDP to %s: %w", r.pair.B.Interface, errors.Join(errs...))
}

func (r *rig) close() error {
	var errs []error
	if r.link != nil {
		errs = append(errs, r.link.Close())
	}
	if r.capture != nil {
		errs = append(errs, r.capture.Close())
	}
	if r.events != nil {
		errs = append(errs, r.events.Close())
	}
	if r.pair != nil {
		errs = append(errs, r.pair.Close())
	}
	return errors.Join(errs...)
}
