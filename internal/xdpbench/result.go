//go:build linux

package xdpbench

import (
	"time"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
)

// Result is what one run measured.
type Result struct {
	// Strategy is the row's name.
	Strategy string
	// Mode is how the program was attached.
	Mode Mode
	// Elapsed is how long the flood ran.
	Elapsed time.Duration
	// Sent counts datagrams the flood handed to the kernel.
	Sent uint64
	// VethDropped counts packets the veth link dropped, at either end.
	VethDropped uint64
	// XDPRuns counts the program's runs (packets it saw), from the
	// kernel's BPF statistics.
	XDPRuns uint64
	// Numbered counts events the program numbered; Dropped those it could
	// not send (ring or perf buffer full).
	Numbered, Dropped uint64
	// TransportLost counts the events the perf reader reported lost.
	TransportLost uint64
	// Delivered counts events the consumer read; Malformed those too
	// short to be events.
	Delivered, Malformed uint64
	// Latency holds each delivered event's latency: the consumer's
	// CLOCK_MONOTONIC when it handled the event minus the capture time.
	Latency *Latencies
	// Consumer is the consumer thread's CPU time over ConsumerWall.
	Consumer     cpustat.Usage
	ConsumerWall time.Duration
	// BPFRunTime is the program's run time, from the kernel's statistics.
	BPFRunTime time.Duration
	// SeqErr is non-nil if some event arrived twice or neither arrived
	// nor was counted as dropped.
	SeqErr error

	sink *sink
}

func perSecond(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// OfferedPPS is the rate the flood sent at.
func (r *Result) OfferedPPS() float64 { return perSecond(r.Sent, r.Elapsed) }

// XDPPPS is the rate the program saw packets at.
func (r *Result) XDPPPS() float64 { return perSecond(r.XDPRuns, r.Elapsed) }

// DeliveredPPS is the rate events reached the consumer at.
func (r *Result) DeliveredPPS() float64 { return perSecond(r.Delivered, r.Elapsed) }

// LostPercent is the share of numbered events the program could not send.
func (r *Result) LostPercent() float64 {
	if r.Numbered == 0 {
		return 0
	}
	return 100 * float64(r.Dropped) / float64(r.Numbered)
}

// EndToEndLostPercent is the share of sent packets whose events did not
// reach the consumer, whether the program could not send them or the
// packets never reached the program (dropped on the veth when the
// receive path falls behind).
func (r *Result) EndToEndLostPercent() float64 {
	if r.Sent == 0 || r.Numbered == 0 {
		return 0
	}
	return 100 * float64(r.Sent-min(r.Delivered, r.Sent)) / float64(r.Sent)
}

// VethDropPercent is the share of sent packets the veth link dropped
// before the program saw them.
func (r *Result) VethDropPercent() float64 {
	if r.Sent == 0 {
		return 0
	}
	return 100 * float64(r.VethDropped) / float64(r.Sent)
}

// Metric is one number for testing.B.ReportMetric.
type Metric struct {
	Value float64
	Unit  string
}

// Metrics returns the numbers a benchmark row reports. Units avoid
// spaces and non-ASCII so benchstat and the table formatter parse them.
func (r *Result) Metrics() []Metric {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	m := []Metric{
		{r.OfferedPPS(), "offered-pps"},
		{r.XDPPPS(), "xdp-pps"},
		{r.DeliveredPPS(), "delivered-pps"},
		{r.LostPercent(), "lost-%"},
		{r.EndToEndLostPercent(), "e2e-lost-%"},
		{r.VethDropPercent(), "veth-drop-%"},
		{cpustat.PerSecond(r.BPFRunTime, r.Elapsed), "bpf-ms/s"},
		{cpustat.PerSecond(r.Consumer.User, r.ConsumerWall), "usr-ms/s"},
		{cpustat.PerSecond(r.Consumer.System, r.ConsumerWall), "sys-ms/s"},
		{cpustat.PerSecond(r.Consumer.Total(), r.ConsumerWall), "cons-ms/s"},
	}
	if r.XDPRuns > 0 {
		m = append(m, Metric{float64(r.BPFRunTime) / float64(r.XDPRuns), "bpf-ns/pkt"})
	}
	if r.Delivered > 0 {
		// CPU per million packets in ms is CPU per packet in ns.
		perPkt := func(d time.Duration) float64 { return float64(d) / float64(r.Delivered) }
		m = append(m,
			Metric{us(r.Latency.Percentile(0.50)), "p50-us"},
			Metric{us(r.Latency.Percentile(0.99)), "p99-us"},
			Metric{us(r.Latency.Percentile(0.999)), "p999-us"},
			Metric{us(r.Latency.Max()), "max-us"},
			Metric{perPkt(r.Consumer.Total()), "cons-ms/Mpkt"},
			Metric{perPkt(r.Consumer.Total() + r.BPFRunTime), "cpu-ms/Mpkt"},
		)
	}
	return m
}
