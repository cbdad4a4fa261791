//go:build linux

package bench

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// k2uKnobs are the kernel-to-user benchmarks' settings, from the
// environment:
//
//	K2U_SIZES      event sizes of the producer sweep (16,80,256,1024,4096)
//	K2U_E2E_SIZES  event sizes end to end (80,1024)
//	K2U_DURATION   how long each end-to-end row produces (1s)
//	K2U_RATES      end to end: producer rates in events/s, 0 for flat
//	               out (0,100000,1000000); at a fixed rate every reader
//	               delivers the same events, so their CPU compares
//	K2U_RING       end to end: ring buffer bytes; perf gets as much in all,
//	               split over the CPUs (33554432)
//	K2U_QUEUE      end to end: queue entries (65536)
type k2uKnobs struct {
	sizes, e2eSizes []int
	rates           []int
	duration        time.Duration
	ring, queue     int
}

func k2uEnv(t testing.TB) k2uKnobs {
	t.Helper()
	k := k2uKnobs{
		sizes:    xdpInts(t, "K2U_SIZES", []int{16, 80, 256, 1024, 4096}),
		e2eSizes: xdpInts(t, "K2U_E2E_SIZES", []int{80, 1024}),
		rates:    xdpInts(t, "K2U_RATES", []int{0, 100000, 1000000}),
		duration: xdpDuration(t, "K2U_DURATION", time.Second),
		ring:     xdpInt(t, "K2U_RING", 32<<20),
		queue:    xdpInt(t, "K2U_QUEUE", 1<<16),
	}
	if xdpSmoke() && os.Getenv("K2U_DURATION") == "" {
		// make test's smoke run: every row for a moment, not a second.
		k.duration = 50 * time.Millisecond
	}
	return k
}

// k2uSkipUnlessAvailable skips without BPF: the kernel or the privileges
// to load programs and create ring buffers.
func k2uSkipUnlessAvailable(t testing.TB) {
	t.Helper()
	m, err := progs.NewRing(4096)
	bpftest.SkipIfUnavailable(t, err, "BPF ring buffers (Linux 5.8+) and the privileges to use them, which the kernel-to-user benchmarks need,")
	m.Close()
}

func k2uSizeName(size int) string { return "size=" + strconv.Itoa(size) }

// k2uRateName names a producer rate, 0 being flat out.
func k2uRateName(rate int) string {
	if rate == 0 {
		return "rate=max"
	}
	return "rate=" + strconv.Itoa(rate)
}
