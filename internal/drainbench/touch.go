//go:build linux

package drainbench

import "encoding/binary"

// Touch sums the first 8 bytes of b (a consumer that reads a few fields)
// or, with all, every whole 8-byte word (a consumer that parses
// everything). Every mode touches records through it, so the sums prove
// that no mode skipped work.
func Touch(b []byte, all bool) uint64 {
	if !all {
		return binary.NativeEndian.Uint64(b)
	}
	var sum uint64
	for ; len(b) >= 8; b = b[8:] {
		sum += binary.NativeEndian.Uint64(b)
	}
	return sum
}

// TouchName names the touch variant as the benchmarks do: "head" or "all".
func TouchName(all bool) string {
	if all {
		return "all"
	}
	return "head"
}
