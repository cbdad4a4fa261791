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

// AddEdgeTriggered is never reached: New fails.
func (*Poller) AddEdgeTriggered(int) error { return ebpf.ErrNotSupported }

// AddEdgeTriggeredWritable is never reached: New fails.
func (*Poller) AddEdgeTriggeredWritable(int) error { return ebpf.ErrNotSupported }

// Wait is never reached: New fails.
func (*Poller) Wait(time.Duration) error { return ebpf.ErrNotSupported }

// Wake is never reached: New fails.
func (*Poller) Wake() error { return ebpf.ErrNotSupported }

// Drain is never reached: New fails.
func (*Poller) Drain() error { return ebpf.ErrNotSupported }

// Close is never reached: New fails.
func (*Poller) Close() error { return nil }
