//go:build !linux

package ringbuf

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

// mapping stands in for Linux's: NewReader fails before one is made.
type mapping struct{}

func mapRing(int, uint64, bool) (*mapping, *ring, error) {
	return nil, nil, fmt.Errorf("mmap ring buffer on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)
}

func (*mapping) unmap() error  { return nil }
func (*mapping) retire() error { return nil }
