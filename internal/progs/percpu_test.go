//go:build linux

package progs

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/readloop"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// newTestRingSet makes a ring set of sizes, closed when the test ends.
func newTestRingSet(t *testing.T, sizes []int) *RingSet {
	t.Helper()
	s, err := NewRingSet(sizes)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// newTestProducer loads a producer for spec, closed when the test ends.
func newTestProducer(t *testing.T, spec RingbufSpec) *Producer {
	t.Helper()
	p, err := NewRingbufProducer(spec)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// possibleCPUs returns how many CPUs the kernel may run programs on.
func possibleCPUs(t *testing.T) int {
	t.Helper()
	n, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// onlineCPUs returns the CPUs this test may pin a thread to.
func onlineCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for cpu := range possibleCPUs(t) {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// ringSeqs reads every record in ring, checks each with size and
// pattern, and returns their sequence numbers in ring order.
func ringSeqs(t *testing.T, ring *ebpf.Map, size int, pattern bool) []uint64 {
	t.Helper()
	rd, err := ringbuf.NewReader(ring)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	// Everything was submitted before this call: the drain ends once
	// what is in the ring now has been read.
	if err := rd.Flush(); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	var bad error
	err = readloop.ReadInto(rd, func(sample []byte) {
		seq, err := CheckRecord(sample, size, pattern)
		bad = cmp.Or(bad, err)
		seqs = append(seqs, seq)
	})
	if err := cmp.Or(err, bad); err != nil {
		t.Fatal(err)
	}
	return seqs
}

// TestPerCPUProducerWritesToItsCPU runs a per-CPU producer a different
// number of times on each CPU, one CPU after the other, and checks that
// each CPU's records, and only those, are in that CPU's ring: both ways
// of choosing the CPU (test-run's BPF_F_TEST_RUN_ON_CPU for a raw
// tracepoint program, a pinned thread for a socket filter), both
// methods, one counter or per-CPU counters, rings of different sizes.
func TestPerCPUProducerWritesToItsCPU(t *testing.T) {
	cases := []struct {
		name   string
		typ    ebpf.ProgramType
		method Method
		cpuSeq bool
	}{
		{"raw_tp/reserve", ebpf.RawTracepoint, Reserve, false},
		{"raw_tp/output", ebpf.RawTracepoint, Output, false},
		{"raw_tp/reserve/cpu_sequence", ebpf.RawTracepoint, Reserve, true},
		{"socket_filter_pinned/reserve", ebpf.SocketFilter, Reserve, false},
		{"socket_filter_pinned/output/cpu_sequence", ebpf.SocketFilter, Output, true},
	}
	const size = 40
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cpus := possibleCPUs(t)
			sizes := make([]int, cpus)
			for i := range sizes {
				sizes[i] = 4096 << (i % 2) // rings of different sizes
			}
			set := newTestRingSet(t, sizes)
			p := newTestProducer(t, RingbufSpec{
				PerCPU: set.Outer, Type: c.typ, Method: c.method, Size: size, Pattern: true, CPUSequence: c.cpuSeq,
			})
			want := make([][]uint64, cpus) // each CPU's sequence numbers
			var next uint64
			for _, cpu := range onlineCPUs(t) {
				times := 3 + 2*cpu
				if c.typ == ebpf.RawTracepoint {
					if err := RunOnCPU(p.Program, cpu, times); err != nil {
						t.Fatal(err)
					}
				} else {
					runPinned(t, p, cpu, times)
				}
				produced, _, err := p.Counts()
				if err != nil {
					t.Fatal(err)
				}
				// Test-run may run a program more often than asked.
				for n := range produced - next {
					seq := next + n
					if c.cpuSeq {
						seq = uint64(cpu)<<48 | n
					}
					want[cpu] = append(want[cpu], seq)
				}
				next = produced
			}
			_, dropped, err := p.Counts()
			if err != nil || dropped != 0 {
				t.Fatalf("dropped %d (%v), want 0", dropped, err)
			}
			for cpu, ring := range set.Rings {
				got := ringSeqs(t, ring, size, true)
				if !slices.Equal(got, want[cpu]) {
					t.Fatalf("ring of CPU %d holds %v, want %v", cpu, got, want[cpu])
				}
			}
		})
	}
}

// runPinned runs p times times from a thread pinned to cpu.
func runPinned(t *testing.T, p *Producer, cpu, times int) {
	t.Helper()
	unpin, err := cpustat.Pin(cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer unpin()
	if err := p.Run(times); err != nil {
		t.Fatal(err)
	}
}

// TestPerCPUProducerConcurrent runs producers on every CPU at once into
// small rings, so some fill, and checks that every sequence number is
// either in exactly one ring or counted as dropped; with per-CPU
// counters, also that each record is in its CPU's ring.
func TestPerCPUProducerConcurrent(t *testing.T) {
	for _, c := range []struct {
		name   string
		cpuSeq bool
	}{
		{"one_counter", false},
		{"cpu_sequence", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := HaveAtomicFetch(); err != nil && !c.cpuSeq {
				// Without atomic fetch, one counter numbers exactly only
				// while one producer runs at a time.
				t.Skipf("concurrent producers on one counter need unique sequence numbers: %v", err)
			}
			const size, runs = 24, 2000
			sizes := make([]int, possibleCPUs(t))
			for i := range sizes {
				sizes[i] = 16384 >> (i % 2) // 512 or 1024 records of 32 bytes
			}
			set := newTestRingSet(t, sizes)
			p := newTestProducer(t, RingbufSpec{PerCPU: set.Outer, Size: size, Flags: NoWakeup, CPUSequence: c.cpuSeq})
			runOnEveryCPU(t, p, runs)
			counts, err := p.CPUCounts()
			if err != nil {
				t.Fatal(err)
			}
			seen := make([]seqcheck.Tracker, len(counts))
			for ring := range set.Rings {
				for _, seq := range ringSeqs(t, set.Rings[ring], size, false) {
					tracker := 0
					if c.cpuSeq {
						cpu, n := CPUOf(seq)
						if cpu != ring {
							t.Fatalf("CPU %d's record %d in the ring of CPU %d", cpu, n, ring)
						}
						tracker, seq = cpu, n
					}
					if !seen[tracker].Add(seq) {
						t.Fatalf("seq %d twice (ring of CPU %d)", seq, ring)
					}
				}
			}
			var dropped uint64
			for i, count := range counts {
				if err := seen[i].Check(count[0], count[1]); err != nil {
					t.Fatalf("counter %d: %v", i, err)
				}
				dropped += count[1]
			}
			if dropped == 0 {
				t.Fatalf("%v records into rings of 512-1024 and none dropped", counts)
			}
		})
	}
}

// runOnEveryCPU runs p runs times on every CPU at once, from threads
// pinned to them.
func runOnEveryCPU(t *testing.T, p *Producer, runs int) {
	t.Helper()
	cpus := onlineCPUs(t)
	var wg sync.WaitGroup
	errs := make(chan error, len(cpus))
	for _, cpu := range cpus {
		wg.Go(func() {
			unpin, err := cpustat.Pin(cpu)
			if err != nil {
				errs <- err
				return
			}
			defer unpin()
			errs <- p.Run(runs)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPerCPUProducerMissingRing checks that a CPU whose slot is empty
// drops its records and counts them.
func TestPerCPUProducerMissingRing(t *testing.T) {
	set := newTestRingSet(t, make4096(possibleCPUs(t)))
	p := newTestProducer(t, RingbufSpec{PerCPU: set.Outer, Type: ebpf.RawTracepoint, Size: 16})
	cpu := onlineCPUs(t)[0]
	if err := set.Outer.Delete(uint32(cpu)); err != nil {
		t.Fatal(err)
	}
	if err := RunOnCPU(p.Program, cpu, 5); err != nil {
		t.Fatal(err)
	}
	produced, dropped, err := p.Counts()
	if err != nil || produced != 5 || dropped != 5 {
		t.Fatalf("produced %d, dropped %d (%v), want 5 and 5", produced, dropped, err)
	}
}

func make4096(n int) []int {
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 4096
	}
	return sizes
}

// TestRingSetBadInput checks that each bad ring set or outer map is
// refused with an error that names the problem.
func TestRingSetBadInput(t *testing.T) {
	// An outer map whose values are arrays: the kernel builds it.
	arrays := func(t *testing.T, fill bool) *ebpf.Map {
		t.Helper()
		inner := &ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}
		outer, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.ArrayOfMaps, KeySize: 4, ValueSize: 4, MaxEntries: 2, InnerMap: inner})
		skipIfNoBPF(t, err)
		t.Cleanup(func() { outer.Close() })
		if fill {
			m, err := ebpf.NewMap(inner)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := outer.Put(uint32(1), m); err != nil {
				t.Fatal(err)
			}
		}
		return outer
	}
	cases := []struct {
		name string
		make func(t *testing.T) error
		want string
	}{
		{"no rings", func(t *testing.T) error {
			_, err := NewRingSet(nil)
			return err
		}, "at least one ring"},
		{"size not a power of two", func(t *testing.T) error {
			_, err := NewRingSet([]int{4096, 12288})
			return err
		}, "ring 1: 12288 bytes"},
		{"outer map of arrays", func(t *testing.T) error {
			_, err := NewRingbufProducer(RingbufSpec{PerCPU: arrays(t, true), Size: 16})
			return err
		}, "slot 1 of the outer map holds a Array map, not a ring buffer"},
		{"empty outer map of arrays", func(t *testing.T) error {
			_, err := NewRingbufProducer(RingbufSpec{PerCPU: arrays(t, false), Size: 16})
			return err
		}, "outer map's values are ring buffers"},
		{"a ring, not an outer map", func(t *testing.T) error {
			ring := newTestRingSet(t, []int{4096}).Rings[0]
			_, err := NewRingbufProducer(RingbufSpec{PerCPU: ring, Size: 16})
			return err
		}, "need a ArrayOfMaps map"},
		{"shared and per-CPU", func(t *testing.T) error {
			set := newTestRingSet(t, []int{4096})
			_, err := NewRingbufProducer(RingbufSpec{Ring: set.Rings[0], PerCPU: set.Outer, Size: 16})
			return err
		}, "both a shared ring and per-CPU rings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.make(t)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// onCPUFlag is what test-run does with BPF_F_TEST_RUN_ON_CPU.
type onCPUFlag int

const (
	honours onCPUFlag = iota // runs the program on the CPU asked for
	refuses                  // EINVAL
	// ignoresBefore518 is XDP's: refused since live-frame mode came in
	// (BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18), ignored before, the
	// program running on the calling thread's CPU (seen on 5.10).
	ignoresBefore518
)

// TestRunOnCPUProgramTypes records which program types test-run will run
// on a chosen CPU (BPF_F_TEST_RUN_ON_CPU), the facts RunOnCPU's doc
// states: raw tracepoints do, once per call (a repeat count is refused);
// the others refuse the flag, or, XDP before 5.18, ignore it. The test
// runs pinned to the first CPU and asks for the last.
func TestRunOnCPUProgramTypes(t *testing.T) {
	cases := []struct {
		typ       ebpf.ProgramType
		progFlags uint32
		data      []byte
		flag      onCPUFlag
	}{
		{ebpf.RawTracepoint, 0, nil, honours},
		{ebpf.SocketFilter, 0, testInput, refuses},
		{ebpf.SchedCLS, 0, testInput, refuses},
		{ebpf.XDP, 0, testInput, ignoresBefore518},
		// Syscall programs (5.14+) must be sleepable.
		{ebpf.Syscall, unix.BPF_F_SLEEPABLE, nil, refuses},
	}
	cpus := onlineCPUs(t)
	here, asked := cpus[0], cpus[len(cpus)-1]
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			// Each subtest is a goroutine of its own: pin it.
			unpin, err := cpustat.Pin(here)
			if err != nil {
				t.Fatal(err)
			}
			defer unpin()
			skipIfNoBPF(t, features.HaveProgramType(c.typ))
			prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
				Type: c.typ, Flags: c.progFlags, License: "GPL",
				Instructions: asm.Instructions{
					asm.FnGetSmpProcessorId.Call(),
					asm.Return(),
				},
			})
			skipIfNoBPF(t, err)
			t.Cleanup(func() { prog.Close() })
			ret, err := prog.Run(&ebpf.RunOptions{Data: c.data, Flags: testRunOnCPU, CPU: uint32(asked)})
			switch {
			case c.flag == honours:
				if err != nil || int(ret) != asked {
					t.Fatalf("ran on CPU %d (%v), want %d", ret, err, asked)
				}
				_, err = prog.Run(&ebpf.RunOptions{Flags: testRunOnCPU, CPU: uint32(asked), Repeat: 2})
				if !errors.Is(err, unix.EINVAL) {
					t.Fatalf("repeat 2 on CPU %d: got %v, want EINVAL", asked, err)
				}
			case c.flag == ignoresBefore518 && err == nil:
				if int(ret) != here {
					t.Fatalf("asked for CPU %d, ran on %d, want the calling thread's %d", asked, ret, here)
				}
			case !errors.Is(err, unix.EINVAL):
				t.Fatalf("run on CPU %d: got %v (ran on %d), want EINVAL", asked, err, ret)
			}
		})
	}
}
