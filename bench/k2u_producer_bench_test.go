//go:build linux

package bench

import (
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/transportbench"
)

// BenchmarkProducer measures what one event costs the BPF program, for
// each helper and its flags and each event size of K2U_SIZES: ns/op is
// the producer's test-run time per event, empty-ns/op an empty program's
// in the same row, net-ns/op the difference. Nobody reads while the
// producer runs; the buffer is emptied between loops of at most
// ProducerRig.Chunk runs, with the timer stopped, and a row fails if the
// buffer ever filled.
func BenchmarkProducer(b *testing.B) {
	k2uSkipUnlessAvailable(b)
	k := k2uEnv(b)
	for _, c := range transportbench.ProducerCases() {
		for _, size := range k.sizes {
			b.Run("helper="+string(c.Helper)+"/flags="+c.Flags+"/"+k2uSizeName(size), func(b *testing.B) {
				k2uProducerRow(b, c, size)
			})
		}
	}
}

func k2uProducerRow(b *testing.B, c transportbench.ProducerCase, size int) {
	rig, err := transportbench.NewProducerRig(c, size)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := rig.Close(); err != nil {
			b.Error(err)
		}
	}()
	var empty time.Duration
	timedChunks(b, rig.Chunk, rig.Produce, func(n int) error {
		start := time.Now()
		if err := rig.RunEmpty(n); err != nil {
			return err
		}
		empty += time.Since(start)
		return rig.Drain()
	})
	raw := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	emptyNs := float64(empty.Nanoseconds()) / float64(b.N)
	b.ReportMetric(emptyNs, "empty-ns/op")
	b.ReportMetric(raw-emptyNs, "net-ns/op")
	// The published comparison's unit: milliseconds for 9,999,999 runs.
	b.ReportMetric(raw*k2uPublishedRuns/1e6, "ms/9999999runs")
}

// k2uPublishedRuns is how many times the published comparison ran its tc
// program per transport.
const k2uPublishedRuns = 9_999_999

// timedChunks runs b.N operations in chunks of at most chunk: timed(n)
// with the timer running, then untimed(n), which empties the buffers
// for the next chunk, with it stopped. The first error fails b.
func timedChunks(b *testing.B, chunk int, timed, untimed func(n int) error) {
	b.Helper()
	b.ResetTimer()
	b.StopTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		b.StartTimer()
		err := timed(n)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := untimed(n); err != nil {
			b.Fatal(err)
		}
		done += n
	}
}
