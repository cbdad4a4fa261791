package progs

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"
)

// skipIfNoBPF skips when the kernel refuses BPF itself (no privileges, no
// support), and fails on any other error.
func skipIfNoBPF(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, os.ErrPermission) {
		t.Skipf("BPF, or a BPF feature, not available here: %v", err)
	}
	t.Fatal(err)
}

func newTestCounters(t *testing.T) *ebpf.Map {
	t.Helper()
	m, err := NewCounters()
	skipIfNoBPF(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}
