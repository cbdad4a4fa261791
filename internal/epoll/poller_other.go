//go:build !linux

package epoll

import (
	"fmt"
	"runtime"
	"time"

	"github.com/cilium/ebpf"
)

// Poller is not available outside Linux: New fails, so no method runs.
type Poller struct{}

// New reports that epoll does not exist on this platform.
func New() (*Poller, error) {
	return nil, fmt.Errorf("epoll on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)
}

// AddEdgeTriggered and the methods below are never reached.
func (*Poller) AddEdgeTriggered(int) error                   { return ebpf.ErrNotSupported }
func (*Poller) AddEdgeTriggeredWritable(int) error           { return ebpf.ErrNotSupported }
func (*Poller) Wait(time.Duration) error                     { return ebpf.ErrNotSupported }
func (*Poller) Wake() error                                  { return ebpf.ErrNotSupported }
func (*Poller) Drain() error                                 { return ebpf.ErrNotSupported }
func (*Poller) Close() error                                 { return nil }
func (*Poller) NewReadiness(func() bool) (*Readiness, error) { return nil, ebpf.ErrNotSupported }

// Readiness is not available outside Linux: NewReadiness fails.
type Readiness struct{}

// FD and the methods below are never reached.
func (*Readiness) FD() int              { return -1 }
func (*Readiness) Set(bool) error       { return ebpf.ErrNotSupported }
func (*Readiness) PollIn(time.Duration) {}
func (*Readiness) Close() error         { return nil }
