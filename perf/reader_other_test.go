//go:build !linux

package perf

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
)

// TestNotSupported: outside Linux, NewReader fails with an error wrapping
// ebpf.ErrNotSupported, before it looks at its arguments.
func TestNotSupported(t *testing.T) {
	if _, err := NewReader(nil, 4096); !errors.Is(err, ebpf.ErrNotSupported) {
		t.Fatalf("NewReader: %v, want ebpf.ErrNotSupported", err)
	}
}
