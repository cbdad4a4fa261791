//go:build !linux

package ringbuf

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

func mapUserRing(int, uint64) (*mapping, *ring, error) {
	return nil, nil, fmt.Errorf("mmap user ring buffer on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)
}

func (*mapping) retire() error { return nil }
