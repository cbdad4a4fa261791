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

// AddEdgeTriggered and the methods below are never reached: New fails.
func (*Poller) AddEdgeTriggered(int) error         { return ebpf.ErrNotSupported }
func (*Poller) AddEdgeTriggeredWritable(int) error { return ebpf.ErrNotSupported }
func (*Poller) Wait(time.Duration) error           { return ebpf.ErrNotSupported }
func (*Poller) Wake() error                        { return ebpf.ErrNotSupported }
func (*Poller) Drain() error                       { return ebpf.ErrNotSupported }
func (*Poller) Close() error                       { return nil }
func (*Poller) Readiness(bool) (int, error)        { return -1, ebpf.ErrNotSupported }
func (*Poller) HasReadiness() bool                 { return false }
func (*Poller) SignalReadiness(bool) error         { return ebpf.ErrNotSupported }
func (*Poller) SetRecordsLeft(bool) error          { return ebpf.ErrNotSupported }
func (*Poller) TakeEdges() error                   { return ebpf.ErrNotSupported }
