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
// environment (K2U_*, internal/benchfamily/k2u.go).
type k2uKnobs struct {
	sizes, e2eSizes []int
	rates           []int
	duration        time.Duration
	ring, queue     int
}

func k2uEnv(t testing.TB) k2uKnobs {
	t.Helper()
	k := k2uKnobs{
		sizes:    knobInts(t, "K2U_SIZES"),
		e2eSizes: knobInts(t, "K2U_E2E_SIZES"),
		rates:    knobInts(t, "K2U_RATES"),
		duration: knobDuration(t, "K2U_DURATION"),
		ring:     knobInt(t, "K2U_RING"),
		queue:    knobInt(t, "K2U_QUEUE"),
	}
	if smokeRun() && os.Getenv("K2U_DURATION") == "" {
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
