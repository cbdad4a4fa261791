//go:build linux

package bench

import (
	"errors"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/transportbench"
)

// BenchmarkK2U runs a producer flat out on one CPU and a consumer on the
// other, for each transport and reader and each size of K2U_E2E_SIZES,
// and reports what reached user space and what the consumer paid for it.
// Each row produces for K2U_DURATION, flat out or at each rate of
// K2U_RATES (so readers compare at the same delivered rate), whatever
// b.N is: run it with
// -benchtime 1x. A row fails if any event arrived twice, or neither
// arrived nor was counted lost by the program.
func BenchmarkK2U(b *testing.B) {
	k2uSkipUnlessAvailable(b)
	k := k2uEnv(b)
	for _, c := range transportbench.EndToEndCases() {
		for _, size := range k.e2eSizes {
			for _, rate := range k.rates {
				b.Run("transport="+string(c.Transport)+"/reader="+string(c.Reader)+"/"+k2uSizeName(size)+"/"+k2uRateName(rate), func(b *testing.B) {
					k2uEndToEndRow(b, k.config(c, size, rate))
				})
			}
		}
	}
}

// k2uEndToEndRow runs one configuration and reports its metrics.
func k2uEndToEndRow(b *testing.B, cfg transportbench.Config) {
	res, err := transportbench.Run(cfg)
	if errors.Is(err, transportbench.ErrNoQueueBatch) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	if res.SeqErr != nil || res.Malformed > 0 {
		b.Errorf("events not delivered exactly once: %v; %d malformed", res.SeqErr, res.Malformed)
	}
	// One timed run, not b.N operations.
	b.ReportMetric(0, "ns/op")
	for _, m := range res.Metrics() {
		b.ReportMetric(m.Value, m.Unit)
	}
}

func (k k2uKnobs) config(c transportbench.Case, size, rate int) transportbench.Config {
	return transportbench.Config{
		Case: c, Size: size, Duration: k.duration, Rate: rate,
		ProducerCPU: 0, ConsumerCPU: -1, RingSize: k.ring, QueueEntries: k.queue,
	}
}
