//go:build linux

package bench

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/netns"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/xdpbench"
)

// xdpKnobs are the XDP benchmarks' settings, from the environment:
//
//	XDP_PPS           offered packets per second, 0 floods (80000)
//	XDP_DURATION      traffic per row (5s)
//	XDP_PAYLOAD       UDP payload bytes (128: 170-byte frames)
//	XDP_SENDERS       flood goroutines (2)
//	XDP_SENDER_CPUS   CPUs the senders, and so the XDP program, run on (0)
//	XDP_CONSUMER_CPU  CPU the consumer runs on (-1: the last)
//	XDP_RING          ring buffer bytes (1048576)
//	XDP_PERF_BUF      perf buffer bytes per CPU (0: XDP_RING / CPUs)
//	XDP_MODE          native, generic, or empty for native then generic
//	XDP_LOSS_PPS      offered rates of the loss sweep (120000,140000,160000,200000)
//	XDP_LOSS_SENDER_CPUS  sender CPUs of the loss sweep (0,1)
type xdpKnobs struct {
	cfg            xdpbench.Config
	lossPPS        []int
	lossSenderCPUs []int
}

func xdpEnv(t testing.TB) xdpKnobs {
	t.Helper()
	if xdpSmoke() && os.Getenv("XDP_DURATION") == "" {
		// make test runs every benchmark with -benchtime 100x as a smoke
		// test; a row here is a timed run that ignores b.N, so keep the
		// smoke short.
		t.Setenv("XDP_DURATION", "200ms")
		t.Setenv("XDP_LOSS_PPS", "140000")
	}
	k := xdpKnobs{cfg: xdpbench.Config{
		PPS:         xdpInt(t, "XDP_PPS", 80000),
		Duration:    xdpDuration(t, "XDP_DURATION", 5*time.Second),
		Payload:     xdpInt(t, "XDP_PAYLOAD", 128),
		Senders:     xdpInt(t, "XDP_SENDERS", 2),
		SenderCPUs:  xdpInts(t, "XDP_SENDER_CPUS", []int{0}),
		ConsumerCPU: xdpInt(t, "XDP_CONSUMER_CPU", -1),
		RingSize:    xdpInt(t, "XDP_RING", 1<<20),
		PerfPerCPU:  xdpInt(t, "XDP_PERF_BUF", 0),
		Mode:        xdpbench.Mode(os.Getenv("XDP_MODE")),
	}}
	k.lossPPS = xdpInts(t, "XDP_LOSS_PPS", []int{120000, 140000, 160000, 200000})
	k.lossSenderCPUs = xdpInts(t, "XDP_LOSS_SENDER_CPUS", []int{0, 1})
	return k
}

// xdpSmoke reports whether the benchmarks run with an iteration count
// above one (-benchtime 100x), which only a smoke run asks of them.
func xdpSmoke() bool {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return false
	}
	v := f.Value.String()
	n, err := strconv.Atoi(strings.TrimSuffix(v, "x"))
	return strings.HasSuffix(v, "x") && err == nil && n > 1
}

// xdpConfigLines returns the settings as benchfmt configuration lines,
// which benchstat and the table formatter keep with the results.
func (k xdpKnobs) configLines() string {
	c := k.cfg
	return fmt.Sprintf("xdp-pps: %d\nxdp-duration: %v\nxdp-payload: %d\nxdp-senders: %d\nxdp-sender-cpus: %s\nxdp-ring: %d\nxdp-perf-buf: %d\n",
		c.PPS, c.Duration, c.Payload, c.Senders, xdpJoin(c.SenderCPUs), c.RingSize, c.PerfPerCPU)
}

func xdpInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func xdpInts(t testing.TB, name string, def []int) []int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		out = append(out, n)
	}
	return out
}

func xdpDuration(t testing.TB, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
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
