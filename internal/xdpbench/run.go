//go:build linux

package xdpbench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/xdpflood"
)

// Config is one measurement: a strategy under an offered load.
type Config struct {
	// Strategy is the row to measure.
	Strategy Strategy
	// PPS is the offered load in packets per second; 0 floods.
	PPS int
	// Duration is how long the traffic runs.
	Duration time.Duration
	// Payload is each UDP datagram's payload in bytes; 0 means 128, which
	// makes 170-byte frames, so each event carries a full 165 bytes.
	Payload int
	// Senders is the number of flood goroutines; 0 means 2.
	Senders int
	// SenderCPUs pins the senders; nil means CPU 0. The XDP program runs
	// in the softirq the send raises, on the sender's CPU.
	SenderCPUs []int
	// ConsumerCPU pins the consumer; -1 means the last CPU.
	ConsumerCPU int
	// RingSize is the ring buffer's size in bytes; 0 means 1 MiB.
	RingSize int
	// PerfPerCPU is each CPU's perf buffer in bytes; 0 means RingSize
	// divided among the possible CPUs, so both transports get the same
	// memory.
	PerfPerCPU int
	// Mode is the XDP attach mode; Auto tries native, then generic.
	Mode Mode
}

func (c *Config) fill() error {
	if c.Duration <= 0 {
		return errors.New("xdpbench: a run needs a duration")
	}
	if c.Payload == 0 {
		c.Payload = 128
	}
	if c.Senders == 0 {
		c.Senders = 2
	}
	if c.SenderCPUs == nil {
		c.SenderCPUs = []int{0}
	}
	// CPUs this machine lacks wrap around, so the defaults made for two
	// CPUs still run on one.
	cpus := runtime.NumCPU()
	c.SenderCPUs = slices.Clone(c.SenderCPUs)
	for i := range c.SenderCPUs {
		c.SenderCPUs[i] %= cpus
	}
	if c.ConsumerCPU < 0 {
		c.ConsumerCPU = cpus - 1
	}
	c.ConsumerCPU %= cpus
	if c.RingSize == 0 {
		c.RingSize = 1 << 20
	}
	if c.PerfPerCPU == 0 {
		cpus, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		c.PerfPerCPU = max(c.RingSize/cpus, 4096)
	}
	return nil
}

// discardPort is where the flood goes: nobody listens there, and with
// XDP_PASS the stack drops the datagrams after the program saw them.
const discardPort = 9

// grace is how long after the flood the consumer keeps reading, for
// packets still on their way through the veth.
const grace = 20 * time.Millisecond

// Run measures one row: it builds the namespaces, attaches the program,
// starts the consumer on its own pinned thread, floods, and tears it all
// down again.
func Run(ctx context.Context, cfg Config) (_ *Result, err error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	// Every sender and the consumer hold a thread that runs Go code; with
	// fewer Ps than that, they would take turns at the Go scheduler's
	// whim instead of running where they are pinned.
	if procs := cfg.Senders + 2; runtime.GOMAXPROCS(0) < procs {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	}
	stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		return nil, fmt.Errorf("xdpbench: enable BPF run time stats: %w", err)
	}
	defer stats.Close()
	rg, err := NewCapture(cfg.Strategy, cfg.RingSize, cfg.Mode)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, rg.Close()) }()
	cons, err := newConsumer(cfg.Strategy, rg.Events, cfg.PerfPerCPU)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cons.close()) }()

	res := &Result{Strategy: cfg.Strategy.Name, Mode: rg.Mode, sink: new(sink)}
	wait, err := cpustat.Go(cfg.ConsumerCPU, func() error { return cons.run(res.sink) })
	if err != nil {
		return nil, err
	}

	statsBefore, err := rg.Program.Program.Stats()
	var dropsBefore uint64
	if err == nil {
		dropsBefore, err = rg.vethDrops()
	}
	if err != nil {
		cons.stop()
		wait()
		return nil, err
	}
	flood, floodErr := xdpflood.Run(ctx, xdpflood.Config{
		From:     &rg.Pair.A,
		To:       netip.AddrPortFrom(rg.Pair.B.Addr, discardPort),
		Payload:  cfg.Payload,
		PPS:      cfg.PPS,
		Duration: cfg.Duration,
		Senders:  cfg.Senders,
		CPUs:     cfg.SenderCPUs,
	})
	time.Sleep(grace)
	statsAfter, statsErr := rg.Program.Program.Stats()
	dropsAfter, dropsErr := rg.vethDrops()
	cons.stop()
	var consErr error
	res.Consumer, res.ConsumerWall, consErr = wait()
	if err := errors.Join(floodErr, statsErr, dropsErr, consErr); err != nil {
		return nil, err
	}
	res.VethDropped = dropsAfter - dropsBefore

	res.Elapsed = flood.Elapsed
	res.Sent = flood.Sent
	res.XDPRuns = statsAfter.RunCount - statsBefore.RunCount
	res.BPFRunTime = statsAfter.Runtime - statsBefore.Runtime
	res.TransportLost = cons.lost()
	if res.Numbered, res.Dropped, err = progs.ReadCounters(rg.Program.Counters); err != nil {
		return nil, err
	}
	res.Delivered = res.sink.delivered
	res.Malformed = res.sink.malformed
	res.Latency = &res.sink.latency
	if cfg.Strategy.Consumer != NoConsumer {
		res.SeqErr = res.sink.seen.Check(res.Numbered, res.Dropped)
	}
	return res, nil
}
