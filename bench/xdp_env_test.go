//go:build linux

package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/netns"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/xdpbench"
)

// xdpKnobs are the XDP benchmarks' settings, from the environment
// (XDP_*, internal/benchfamily/xdp.go).
type xdpKnobs struct {
	cfg            xdpbench.Config
	lossPPS        []int
	lossSenderCPUs []int
}

func xdpEnv(t testing.TB) xdpKnobs {
	t.Helper()
	if smokeRun() && os.Getenv("XDP_DURATION") == "" {
		// make test runs every benchmark with -benchtime 100x as a smoke
		// test; a row here is a timed run that ignores b.N, so keep the
		// smoke short.
		t.Setenv("XDP_DURATION", "200ms")
		t.Setenv("XDP_LOSS_PPS", "140000")
	}
	k := xdpKnobs{cfg: xdpbench.Config{
		PPS:         knobInt(t, "XDP_PPS"),
		Duration:    knobDuration(t, "XDP_DURATION"),
		Payload:     knobInt(t, "XDP_PAYLOAD"),
		Senders:     knobInt(t, "XDP_SENDERS"),
		SenderCPUs:  knobInts(t, "XDP_SENDER_CPUS"),
		ConsumerCPU: knobInt(t, "XDP_CONSUMER_CPU"),
		RingSize:    knobInt(t, "XDP_RING"),
		PerfPerCPU:  knobInt(t, "XDP_PERF_BUF"),
		Mode:        xdpbench.Mode(knobText(t, "XDP_MODE")),
	}}
	k.lossPPS = knobInts(t, "XDP_LOSS_PPS")
	k.lossSenderCPUs = knobInts(t, "XDP_LOSS_SENDER_CPUS")
	return k
}

// xdpConfigLines returns the settings as benchfmt configuration lines,
// which benchstat and the table formatter keep with the results.
func (k xdpKnobs) configLines() string {
	c := k.cfg
	return fmt.Sprintf("xdp-pps: %d\nxdp-duration: %v\nxdp-payload: %d\nxdp-senders: %d\nxdp-sender-cpus: %s\nxdp-ring: %d\nxdp-perf-buf: %d\n",
		c.PPS, c.Duration, c.Payload, c.Senders, xdpJoin(c.SenderCPUs), c.RingSize, c.PerfPerCPU)
}

func xdpJoin(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// xdpSkipUnlessAvailable skips when this machine cannot run the XDP
// benchmarks: no ip(8) or no root for the namespaces, or no BPF.
func xdpSkipUnlessAvailable(t testing.TB) {
	t.Helper()
	if err := netns.Available(); err != nil {
		t.Skipf("XDP benchmarks need network namespaces and veth: %v", err)
	}
	m, err := progs.NewRing(4096)
	bpftest.SkipIfUnavailable(t, err, "BPF ring buffers, which the XDP benchmarks need,")
	m.Close()
	if err := progs.HaveXDPLoadBytes(); err != nil {
		t.Skipf("XDP benchmarks: %v", err)
	}
}
