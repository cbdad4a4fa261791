//go:build linux

package xdpbench

import (
	"fmt"
	"time"

	"github.com/ebpf-zc/ebpf/internal/progs"
)

// Consumer is how user space takes events out of the kernel.
type Consumer uint8

const (
	// NoConsumer reads nothing: the baseline, whose program sends nothing.
	NoConsumer Consumer = iota
	// PerfEpoll reads a perf event array with cilium/ebpf's perf.Reader
	// (ReadInto, one wake-up per event: its default watermark of 1 byte).
	PerfEpoll
	// RecordsEpoll ranges over our ringbuf Reader's Records, zero-copy,
	// sleeping in epoll while the ring is empty.
	RecordsEpoll
	// UpstreamReadInto calls cilium/ebpf's ringbuf.Reader ReadInto, which
	// copies each record, sleeping in epoll while the ring is empty.
	UpstreamReadInto
	// RecordsBusyPoll ranges over Records with a deadline in the past,
	// again and again, never sleeping.
	RecordsBusyPoll
	// RecordsSleep drains the ring with Records (deadline in the past),
	// then sleeps Strategy.Sleep with nanosleep(2), and again.
	RecordsSleep
	// UpstreamSleep is RecordsSleep with cilium/ebpf's ringbuf.Reader and
	// ReadInto: the same wake-ups, so only the readers differ.
	UpstreamSleep
	// PerfRecordsEpoll ranges over our perf.Reader's Records, zero-copy,
	// with PerfEpoll's wake-ups (perf_records.go).
	PerfRecordsEpoll
)

// Strategy is one row of the benchmark: what the XDP program sends and
// how user space consumes it.
type Strategy struct {
	// Name names the row, as in BenchmarkXDP/strategy=Name.
	Name string
	// Output is the XDP program's transport.
	Output progs.XDPOutput
	// Flags go to bpf_ringbuf_submit.
	Flags uint64
	// Consumer is the user space side.
	Consumer Consumer
	// Sleep is RecordsSleep's pause between drains.
	Sleep time.Duration
}

// SleepSteps are the pauses of the sleeping rows, as in the study.
var SleepSteps = []time.Duration{
	10 * time.Microsecond, 20 * time.Microsecond, 50 * time.Microsecond,
	100 * time.Microsecond, 200 * time.Microsecond, 500 * time.Microsecond,
}

// Strategies returns every row of the benchmark in the order the table
// shows them.
//
// The polling rows submit with BPF_RB_NO_WAKEUP: nobody sleeps in epoll
// for them, so a wake-up would be work for nothing.
func Strategies() []Strategy {
	s := []Strategy{
		{Name: "baseline", Output: progs.XDPNoOutput, Consumer: NoConsumer},
		{Name: "perf-epoll", Output: progs.XDPPerf, Consumer: PerfEpoll},
		{Name: "perf-epoll-records", Output: progs.XDPPerf, Consumer: PerfRecordsEpoll},
		{Name: "rb-epoll", Output: progs.XDPRingbuf, Consumer: RecordsEpoll},
		{Name: "rb-epoll-force", Output: progs.XDPRingbuf, Flags: progs.ForceWakeup, Consumer: RecordsEpoll},
		{Name: "rb-epoll-upstream", Output: progs.XDPRingbuf, Consumer: UpstreamReadInto},
		{Name: "rb-busy", Output: progs.XDPRingbuf, Flags: progs.NoWakeup, Consumer: RecordsBusyPoll},
	}
	for _, d := range SleepSteps {
		s = append(s, Strategy{
			Name:   fmt.Sprintf("rb-sleep-%dus", d.Microseconds()),
			Output: progs.XDPRingbuf, Flags: progs.NoWakeup, Consumer: RecordsSleep, Sleep: d,
		})
	}
	return append(s, Strategy{
		Name:   "rb-sleep-50us-upstream",
		Output: progs.XDPRingbuf, Flags: progs.NoWakeup, Consumer: UpstreamSleep, Sleep: 50 * time.Microsecond,
	})
}
