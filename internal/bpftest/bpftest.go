// Package bpftest holds what the packages' tests and benchmarks share,
// written once, a file each: the one rule for skipping (a test may skip
// only where BPF or a feature is missing, and must say so: this file);
// checks of a contract both readers keep (close.go, flush.go); the
// process's CPU time and the idle-waiter check (idle.go); its descriptors
// and mappings, and the no-leak check (resources.go); the ledger of the
// exactly-once tests (ledger.go, retry.go); producers pinned to CPUs
// (produce.go); child processes and Ps (process.go); and the small waits
// and loops of the tests (wait.go, loops.go).
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

// SkipIfNoRingBuf is [SkipIfUnavailable] for what the ringbuf package's
// tests need: BPF ring buffers.
func SkipIfNoRingBuf(tb testing.TB, err error) {
	tb.Helper()
	SkipIfUnavailable(tb, err, "BPF ring buffers")
}

// SkipIfNoPerfEventArray is [SkipIfUnavailable] for what the perf
// package's tests need: BPF perf event arrays.
func SkipIfNoPerfEventArray(tb testing.TB, err error) {
	tb.Helper()
	SkipIfUnavailable(tb, err, "BPF perf event arrays")
}

// SkipUnlessAtomicSequences skips tb unless producers running on several
// CPUs at once can number their records with atomic operations: probe is
// progs.HaveAtomicFetch (this package cannot import progs, whose tests
// import it), and its error says what the kernel lacks.
func SkipUnlessAtomicSequences(tb testing.TB, probe func() error) {
	tb.Helper()
	if err := probe(); err != nil {
		tb.Skipf("producers on two CPUs need atomic sequence numbers: %v", err)
	}
}
