//go:build linux

package progs

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// skipIfNoBPF skips when the kernel refuses BPF itself (no privileges, no
// support), and fails on any other error.
func skipIfNoBPF(t *testing.T, err error) {
	t.Helper()
	bpftest.SkipIfUnavailable(t, err, "BPF, or a BPF feature,")
}

func newTestCounters(t *testing.T) *ebpf.Map {
	t.Helper()
	m, err := NewCounters()
	skipIfNoBPF(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}
