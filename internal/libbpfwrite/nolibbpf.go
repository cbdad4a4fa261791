//go:build !libbpf

package libbpfwrite

import "github.com/cilium/ebpf"

// Writer is libbpf's user ring buffer producer; without -tags libbpf it
// has nothing to write with.
type Writer struct{}

// Open reports that this build has no libbpf.
func Open(*ebpf.Map, []byte) (*Writer, error) { return nil, ErrNoLibbpf }

// Write is never reached: Open fails.
func (*Writer) Write(uint64, int) error { return ErrNoLibbpf }

// Close does nothing.
func (*Writer) Close() error { return nil }
