//go:build linux

package drainbench

import (
	"github.com/ebpf-zc/ebpf/internal/drainloop"
	"github.com/ebpf-zc/ebpf/internal/rawring"
)

// Drainer is what a mode's Open returns, drainloop's: the perf drain
// shares it, and the loop that times it.
type Drainer = drainloop.Drainer

// Touch is drainloop.Touch, for the modes written against this package
// (ours, and internal/upstreambench's generated ones). It calls
// rawring.Touch itself, not drainloop.Touch: a wrapper of a wrapper
// costs more than the inliner's budget, and a call per record would
// slow every mode that uses it.
func Touch(b []byte, all bool) uint64 { return rawring.Touch(b, all) }
