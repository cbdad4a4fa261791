//go:build !linux

package perf

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

// NewReader fails at supported: the functions below never run.
var errNoPerf = fmt.Errorf("perf events on %s: %w", runtime.GOOS, ebpf.ErrNotSupported)

func supported() error                                 { return errNoPerf }
func openEvent(int, int, int, bool) (int, error)       { return -1, errNoPerf }
func mapEvent(int, int, bool) ([]byte, *buffer, error) { return nil, nil, errNoPerf }
func unmap([]byte) error                               { return nil }
func closeFd(int) error                                { return nil }
func errOffline(error) bool                            { return false }
