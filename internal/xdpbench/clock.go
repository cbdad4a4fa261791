//go:build linux

package xdpbench

import _ "unsafe" // for go:linkname

// monotonicNow returns CLOCK_MONOTONIC in nanoseconds, the clock
// bpf_ktime_get_ns reads, through the vDSO and without a system call: the
// runtime's nanotime, which the runtime keeps reachable by linkname for
// packages that need a raw monotonic clock (go.dev/issue/67401). A
// time.Time's monotonic reading has an unknown origin, so it cannot be
// compared with a timestamp taken in the kernel.
//
//go:linkname monotonicNow runtime.nanotime
func monotonicNow() int64
