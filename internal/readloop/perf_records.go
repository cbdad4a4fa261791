//go:build linux

package readloop

import (
	"errors"

	ourperf "github.com/ebpf-zc/ebpf/perf"
)

// PerfRecords reads rd, our perf reader, with its Records iterator: each
// sample is handled in place, in the CPU's buffer, with no copy. It
// returns the samples the kernel reported lost once Flush ends the loop.
func PerfRecords(rd *ourperf.Reader, handle func([]byte)) (lost uint64, err error) {
	for rec, err := range rd.Records() {
		if errors.Is(err, ourperf.ErrFlushed) {
			return lost, nil
		}
		if err != nil {
			return lost, err
		}
		if rec.LostSamples > 0 {
			lost += rec.LostSamples
			continue
		}
		handle(rec.RawSample)
	}
	return lost, nil
}
