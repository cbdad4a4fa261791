package rawring

import "encoding/binary"

// Touch is the consumer's work on a sample, the same in every mode of
// BenchmarkRead: it sums the first 8 bytes (a consumer that reads a few
// fields) or, with all, every whole 8-byte word (one that parses it all).
// The sums prove that no mode skipped a record or a byte.
func Touch(sample []byte, all bool) uint64 {
	if !all {
		if len(sample) < 8 {
			return 0 // no whole word, as with all
		}
		return binary.NativeEndian.Uint64(sample)
	}
	var sum uint64
	for ; len(sample) >= 8; sample = sample[8:] {
		sum += binary.NativeEndian.Uint64(sample)
	}
	return sum
}
