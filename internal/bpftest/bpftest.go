// Package bpftest holds what the packages' tests and benchmarks share:
// the one rule for skipping (a test may skip only where BPF is missing,
// and must say so), and checks of a contract both readers keep.
package bpftest

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"
)

// Unavailable reports whether err means the kernel or the privileges
// refuse BPF, or a BPF feature the caller needs: cilium/ebpf's
// ErrNotSupported, or a permission error.
func Unavailable(err error) bool {
	return errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, os.ErrPermission)
}

// SkipIfUnavailable does nothing for a nil err, skips tb with need (what
// the test needs, e.g. "BPF ring buffers") and err when err says BPF is
// unavailable, and fails tb on any other error.
func SkipIfUnavailable(tb testing.TB, err error, need string) {
	tb.Helper()
	if err == nil {
		return
	}
	if Unavailable(err) {
		tb.Skipf("%s not available here: %v", need, err)
	}
	tb.Fatal(err)
}
