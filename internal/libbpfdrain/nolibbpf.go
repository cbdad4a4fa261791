//go:build !libbpf

package libbpfdrain

import "github.com/cilium/ebpf"

// Drainer is libbpf's ring buffer consumer; without -tags libbpf it has
// nothing to drain with.
type Drainer struct{}

// Open reports that this build has no libbpf.
func Open(*ebpf.Map) (*Drainer, error) { return nil, ErrNoLibbpf }

// Drain is never reached: Open fails.
func (*Drainer) Drain(int, bool) (uint64, error) { return 0, ErrNoLibbpf }

// Close does nothing.
func (*Drainer) Close() error { return nil }
