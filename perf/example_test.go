//go:build linux

package perf_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/exampletest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/perf"
)

// output stands in for the BPF program of the examples, run n times on
// one CPU:
//
//	struct {
//		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
//		__uint(key_size, sizeof(__u32));
//		__uint(value_size, sizeof(__u32));
//	} events SEC(".maps");
//
//	struct sample { __u64 seq; __u8 rest[192]; };
//
//	SEC("tc") int produce(struct __sk_buff *skb) {
//		struct sample s = { .seq = seq++ };
//		bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU, &s, sizeof(s));
//		return 0;
//	}
func output(events *ebpf.Map, n int) error {
	producer, err := progs.NewPerfProducer(progs.PerfSpec{Events: events, Size: 200})
	if err != nil {
		return err
	}
	defer producer.Close()
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return err
	}
	cpu := 0
	for !allowed.IsSet(cpu) {
		cpu++
	}
	unpin, err := cpustat.Pin(cpu) // BPF_F_CURRENT_CPU: every sample to one CPU's buffer
	if err != nil {
		return err
	}
	defer unpin()
	return producer.Run(n)
}

// Records ranges over views of the samples of every CPU's buffer. A
// sample that does not fit because the reader fell behind is lost, and the
// kernel says how many it lost, in a record of its own, once there is
// room again.
func ExampleReader_Records() {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray}) // one entry per CPU
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	// One page per CPU: the samples below do not all fit.
	rd, err := perf.NewReader(events, os.Getpagesize())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()

	var samples, lost uint64
	read := func() {
		rd.SetDeadline(time.Now().Add(100 * time.Millisecond))
		for rec, err := range rd.Records() {
			if err != nil {
				return // os.ErrDeadlineExceeded once every buffer is empty
			}
			if rec.LostSamples > 0 {
				lost += rec.LostSamples
				continue
			}
			samples++ // rec.RawSample is valid until the loop body returns
		}
	}
	if err := output(events, 100); err != nil { // the BPF program runs 100 times
		fmt.Println(err)
		return
	}
	read()
	if err := output(events, 1); err != nil { // the kernel reports the lost samples before this one
		fmt.Println(err)
		return
	}
	read()
	fmt.Println(samples+lost, "samples accounted for, some lost:", lost > 0)
}

func TestExampleOutputs(t *testing.T) {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
	bpftest.SkipIfUnavailable(t, err, "BPF perf event arrays")
	events.Close()

	exampletest.Run(t, []exampletest.Example{
		{Name: "ExampleReader_Records", Run: ExampleReader_Records, Output: "101 samples accounted for, some lost: true\n"},
	})
}
