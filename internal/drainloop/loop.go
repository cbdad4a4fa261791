//go:build linux

// Package drainloop is what the ring buffer drain (internal/drainbench)
// and the perf drain (internal/perfdrain) share: the timed loop, the
// touch every mode does to every record, and the check that the touches
// add up to what the producer wrote. It imports neither drain's rig, so
// perf's test binary links the perf drain and this loop, and nothing of
// the ring buffer's benchmarks.
package drainloop

import "testing"

// A Drainer consumes exactly n records, touching each one with Touch, and
// returns the sum of what it touched. It fails rather than return early:
// fewer records than n in the buffer is an error.
type Drainer interface {
	Drain(n int, all bool) (uint64, error)
	Close() error
}

// Refill puts records into an empty buffer, untimed, and returns how many
// it placed and the sequence number of the first. Run calls it with how
// many records the benchmark still needs.
type Refill func(b *testing.B, want int) (placed int, firstSeq uint64)

// Run has d drain b.N records of size bytes, calling refill whenever
// what it placed is used up, fails b if the records touched do not add up
// to what the producer wrote (word i of record seq holds seq+i), and
// reports Mrec/s beside ns/op. It returns how many placed records are
// left undrained and the sequence number of the first, for a buffer kept
// from one benchmark to the next.
func Run(b *testing.B, d Drainer, all bool, size int, refill Refill) (left int, nextSeq uint64) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	var (
		sum, want, seq uint64
		placed         int
	)
	for left = b.N; left > 0; {
		if placed == 0 {
			b.StopTimer()
			placed, seq = refill(b, left)
			b.StartTimer()
		}
		n := min(left, placed)
		got, err := d.Drain(n, all)
		if err != nil {
			b.Fatal(err)
		}
		sum += got
		want += ExpectedSum(size, seq, n, all)
		placed -= n
		seq += uint64(n)
		left -= n
	}
	b.StopTimer()
	if sum != want {
		b.Fatalf("records touched add up to %d, want %d: a mode skipped or repeated records", sum, want)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
	return placed, seq
}

// ExpectedSum is what touching n records of size bytes from seq on must
// add up to, given that word i of record seq holds seq+i.
func ExpectedSum(size int, seq uint64, n int, all bool) uint64 {
	count := uint64(n)
	seqs := count*seq + count*(count-1)/2
	if !all {
		return seqs
	}
	words := uint64(size / 8)
	return words*seqs + count*words*(words-1)/2
}
