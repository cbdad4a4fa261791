//go:build !linux

package perf

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

// mapping stands in for the Linux mapping: NewReader fails before one is
// made, so the functions below never run but supported.
type mapping struct{}

var errNoPerf = fmt.Errorf("perf events on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)

func supported() error                                   { return errNoPerf }
func openEvent(int, ReaderOptions) (int, error)          { return -1, errNoPerf }
func mapEvent(int, int, bool) (*mapping, *buffer, error) { return nil, nil, errNoPerf }
func (*mapping) unmap() error                            { return nil }
func closeFd(int) error                                  { return nil }
func errOffline(error) bool                              { return false }
