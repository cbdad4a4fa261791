//go:build linux

package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/xdpbench"
)

// xdpConfigOnce prints the settings once, ahead of the first result.
var (
	xdpConfigOnce sync.Once
	xdpLastMode   xdpbench.Mode
	xdpModeMu     sync.Mutex
)

// BenchmarkXDP sends real UDP traffic between two network namespaces,
// captures every packet with an XDP program on the receiving veth, and
// consumes the events with each strategy in turn: one row per strategy,
// at the offered load XDP_PPS. Each row runs its traffic once, for
// XDP_DURATION, whatever b.N is: run it with -benchtime 1x.
func BenchmarkXDP(b *testing.B) {
	xdpSkipUnlessAvailable(b)
	k := xdpEnv(b)
	xdpConfigOnce.Do(func() { fmt.Print(k.configLines()) })
	for _, st := range xdpbench.Strategies() {
		b.Run("strategy="+st.Name, func(b *testing.B) {
			cfg := k.cfg
			cfg.Strategy = st
			xdpRunRow(b, cfg)
		})
	}
}

// BenchmarkXDPLoss looks for the offered load at which perf + epoll
// starts losing packets while ring buffer + epoll does not: it runs both
// at each rate of XDP_LOSS_PPS, with the senders (and so the XDP program)
// on XDP_LOSS_SENDER_CPUS, by default both CPUs, so the consumer has to
// share its CPU with the traffic as on a loaded machine.
func BenchmarkXDPLoss(b *testing.B) {
	xdpSkipUnlessAvailable(b)
	k := xdpEnv(b)
	xdpConfigOnce.Do(func() { fmt.Print(k.configLines()) })
	var rows []xdpbench.Strategy
	for _, st := range xdpbench.Strategies() {
		if st.Name == "perf-epoll" || st.Name == "rb-epoll" {
			rows = append(rows, st)
		}
	}
	for _, pps := range k.lossPPS {
		for _, st := range rows {
			b.Run(fmt.Sprintf("pps=%d/strategy=%s", pps, st.Name), func(b *testing.B) {
				cfg := k.cfg
				cfg.Strategy, cfg.PPS, cfg.SenderCPUs = st, pps, k.lossSenderCPUs
				xdpRunRow(b, cfg)
			})
		}
	}
}

// xdpRunRow runs one configuration and reports its metrics.
func xdpRunRow(b *testing.B, cfg xdpbench.Config) {
	res, err := xdpbench.Run(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	xdpModeMu.Lock()
	if res.Mode != xdpLastMode {
		// A configuration line, so the results file says how the
		// program ran.
		fmt.Printf("xdp-mode: %s\n", res.Mode)
		xdpLastMode = res.Mode
	}
	xdpModeMu.Unlock()
	if res.SeqErr != nil {
		b.Errorf("events not delivered exactly once: %v", res.SeqErr)
	}
	if res.Malformed > 0 {
		b.Errorf("%d malformed events", res.Malformed)
	}
	// One run of fixed length, not b.N operations: ns/op would mean
	// nothing, so hide it.
	b.ReportMetric(0, "ns/op")
	for _, m := range res.Metrics() {
		b.ReportMetric(m.Value, m.Unit)
	}
}
