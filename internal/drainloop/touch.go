//go:build linux

package drainloop

import "github.com/ebpf-zc/ebpf/internal/rawring"

// Touch is the consumer's work on each record, rawring.Touch: the first 8
// bytes (a consumer that reads a few fields) or, with all, every whole
// 8-byte word (one that parses everything). Every mode, the floor
// included, touches records through it, so the sums prove that no mode
// skipped work and the modes do the same work.
func Touch(b []byte, all bool) uint64 { return rawring.Touch(b, all) }

// TouchName names the touch variant as the benchmarks do: "head" or "all".
func TouchName(all bool) string {
	if all {
		return "all"
	}
	return "head"
}
