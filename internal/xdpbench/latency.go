//go:build linux

package xdpbench

import (
	"math"
	"math/bits"
	"time"
)

// Latencies counts per-packet latencies in nanoseconds in a fixed array of
// log-linear buckets: 64 per power of two, so a percentile is off by at
// most 1/64 (1.6%) of its value, recording costs a few instructions and
// never allocates, and no sample is thrown away. The maximum is exact.
type Latencies struct {
	counts [latencyBuckets]uint64
	n      uint64
	max    uint64
	sum    uint64
}

const (
	subBits        = 6
	subBuckets     = 1 << subBits // per power of two
	latencyBuckets = (64-subBits)*subBuckets + subBuckets
)

// bucketOf returns v's bucket: values below 2*subBuckets have one each,
// larger ones share a bucket with the values that agree in their top
// subBits+1 bits.
func bucketOf(v uint64) int {
	if v < 2*subBuckets {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return (shift+1)*subBuckets + int(v>>shift) - subBuckets
}

// bucketMid returns the middle of bucket i's range of values.
func bucketMid(i int) uint64 {
	if i < 2*subBuckets {
		return uint64(i)
	}
	shift := i/subBuckets - 1
	low := uint64(i%subBuckets+subBuckets) << shift
	return low + (uint64(1)<<shift)/2
}

// Record adds one latency; a negative one (which a consistent clock never
// gives) counts as zero.
func (l *Latencies) Record(ns int64) {
	v := uint64(max(ns, 0))
	l.counts[bucketOf(v)]++
	l.n++
	l.sum += v
	l.max = max(l.max, v)
}

// Count returns how many latencies were recorded.
func (l *Latencies) Count() uint64 { return l.n }

// Max returns the largest latency recorded.
func (l *Latencies) Max() time.Duration { return time.Duration(l.max) }

// Mean returns the average latency.
func (l *Latencies) Mean() time.Duration {
	if l.n == 0 {
		return 0
	}
	return time.Duration(l.sum / l.n)
}

// Percentile returns the latency that q (in [0, 1]) of the recorded ones
// do not exceed, to the bucket's precision, and never above the maximum.
func (l *Latencies) Percentile(q float64) time.Duration {
	if l.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(l.n)))
	rank = min(max(rank, 1), l.n)
	var seen uint64
	for i, c := range l.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(bucketMid(i), l.max))
		}
	}
	return time.Duration(l.max)
}
