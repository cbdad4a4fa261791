//go:build !linux

package perf

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

// mapping stands in for the Linux mapping where perf events cannot be
// opened: NewReader fails before one is made.
type mapping struct{}

// supported reports that perf events do not exist on this platform.
func supported() error {
	return fmt.Errorf("perf events on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)
}

func openEvent(int, ReaderOptions) (int, error) {
	return -1, fmt.Errorf("perf events on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)
}

func mapEvent(int, int, bool) (*mapping, *buffer, error) {
	return nil, nil, fmt.Errorf("perf events on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)
}

func (*mapping) unmap() error { return nil }

func closeFd(int) error { return nil }

func errOffline(error) bool { return false }
