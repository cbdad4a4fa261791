//go:build linux

package rawring

import (
	"encoding/binary"
	"unsafe"
)

// Touch is the consumer's work on a sample, the same in every mode of
// BenchmarkRead: it sums the first 8 bytes (a consumer that reads a few
// fields) or, with all, every whole 8-byte word (one that parses it all).
// The sums prove that no mode skipped a record or a byte.
func Touch(sample []byte, all bool) uint64 {
	if all {
		return touchWords(sample)
	}
	if len(sample) < 8 {
		return 0 // no whole word, as with all
	}
	return *(*uint64)(unsafe.Pointer(unsafe.SliceData(sample))) // in native byte order
}

// touchWords sums every whole 8-byte word of sample into four sums, so
// that four additions are in flight at a time rather than one.
func touchWords(sample []byte) uint64 {
	var sum0, sum1, sum2, sum3 uint64
	for ; len(sample) >= 32; sample = sample[32:] {
		sum0 += binary.NativeEndian.Uint64(sample[0:8])
		sum1 += binary.NativeEndian.Uint64(sample[8:16])
		sum2 += binary.NativeEndian.Uint64(sample[16:24])
		sum3 += binary.NativeEndian.Uint64(sample[24:32])
	}
	for ; len(sample) >= 8; sample = sample[8:] {
		sum0 += binary.NativeEndian.Uint64(sample)
	}
	return sum0 + sum1 + sum2 + sum3
}
