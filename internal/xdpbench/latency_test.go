//go:build linux

package xdpbench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestBucketsCoverEveryValue checks buckets are contiguous, ordered, and
// that each value's bucket middle is within 1/64 of it.
func TestBucketsCoverEveryValue(t *testing.T) {
	for _, v := range []uint64{0, 1, 63, 64, 127, 128, 129, 255, 256, 1000, 1 << 20, 123456789, 1 << 62, 1<<64 - 1} {
		i := bucketOf(v)
		if i < 0 || i >= latencyBuckets {
			t.Fatalf("value %d: bucket %d out of range", v, i)
		}
		mid := bucketMid(i)
		diff := float64(mid) - float64(v)
		if diff < 0 {
			diff = -diff
		}
		if diff > float64(v)/64+1 {
			t.Errorf("value %d: bucket %d middle %d, off by more than 1/64", v, i, mid)
		}
	}
	for v := uint64(0); v < 1<<16; v++ {
		if bucketOf(v+1) < bucketOf(v) || bucketOf(v+1) > bucketOf(v)+1 {
			t.Fatalf("buckets of %d and %d not contiguous: %d, %d", v, v+1, bucketOf(v), bucketOf(v+1))
		}
	}
}

// TestPercentiles compares percentiles with exact ones from sorted
// samples of several distributions.
func TestPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		gen  func() int64
	}{
		{"constant", func() int64 { return 5000 }},
		{"uniform", func() int64 { return rng.Int64N(100_000) }},
		{"exponential", func() int64 { return int64(rng.ExpFloat64() * 20_000) }},
		{"bimodal", func() int64 {
			if rng.IntN(100) == 0 {
				return 5_000_000 + rng.Int64N(1000)
			}
			return 3000 + rng.Int64N(100)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l Latencies
			samples := make([]int64, 100_000)
			for i := range samples {
				samples[i] = tc.gen()
				l.Record(samples[i])
			}
			slices.Sort(samples)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
				exact := float64(samples[max(int(q*float64(len(samples)))-1, 0)])
				got := float64(l.Percentile(q))
				if got < exact*(1-1.0/32)-1 || got > exact*(1+1.0/32)+1 {
					t.Errorf("p%v = %v, exact %v", q*100, got, exact)
				}
			}
			if l.Max() != time.Duration(samples[len(samples)-1]) || l.Count() != uint64(len(samples)) {
				t.Errorf("max %v count %d, want %d %d", l.Max(), l.Count(), samples[len(samples)-1], len(samples))
			}
		})
	}
	var empty Latencies
	if empty.Percentile(0.5) != 0 || empty.Mean() != 0 {
		t.Error("empty histogram reports a latency")
	}
}
