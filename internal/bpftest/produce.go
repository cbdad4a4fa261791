//go:build linux

package bpftest

import (
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
)

// The producers of the tests of ringbuf and perf: test-run programs,
// pinned to the CPUs the tests use, that fill a buffer for a number of
// runs or keep it busy.

// CPUs returns up to two CPUs this process may run on, the CPUs a test's
// producers run on at once: the kernel matrix's VMs have one.
func CPUs(tb testing.TB) []int {
	tb.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		tb.Fatal(err)
	}
	var cpus []int
	for cpu := 0; cpu < 1024 && len(cpus) < 2; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// Producer is a program that produces records each time it runs, as
// internal/progs builds them.
type Producer interface {
	Run(times int) error
}

// KeepProducing runs every producer in bursts of 50 runs on each of cpus
// at once, sleeping pause() between bursts if pause is not nil, until
// stop is called (or the test ends); stop returns when the producers have
// stopped. A full buffer drops records: the producers count them.
func KeepProducing[P Producer](tb testing.TB, producers []P, cpus []int, pause func() time.Duration) (stop func()) {
	tb.Helper()
	done := make(chan struct{})
	var producing sync.WaitGroup
	for _, p := range producers {
		for _, cpu := range cpus {
			producing.Add(1)
			go func() {
				defer producing.Done()
				if unpin, err := cpustat.Pin(cpu); err == nil {
					defer unpin()
				}
				for {
					select {
					case <-done:
						return
					default:
					}
					if err := p.Run(50); err != nil {
						tb.Error(err)
						return
					}
					if pause != nil {
						time.Sleep(pause())
					}
				}
			}()
		}
	}
	var once sync.Once
	stop = func() {
		once.Do(func() { close(done) })
		producing.Wait()
	}
	tb.Cleanup(stop)
	return stop
}

// ProduceOn runs every producer on each of cpus at once, in bursts of
// 500 runs: runs times (Run's at least), and on while more (if not nil)
// says so, at most 10 s more. It returns when all are done. more lets a test wait
// until every reader has had records: on CPUs shared by many goroutines
// the scheduler may leave one out for a while.
func ProduceOn[P Producer](t *testing.T, producers []P, cpus []int, runs int, more func() bool) {
	t.Helper()
	giveUp := time.Now().Add(10 * time.Second)
	var producing sync.WaitGroup
	for _, p := range producers {
		for _, cpu := range cpus {
			producing.Go(func() {
				if unpin, err := cpustat.Pin(cpu); err == nil {
					defer unpin()
				}
				for done := 0; done < runs || more != nil && more() && time.Now().Before(giveUp); done += 500 {
					burst := 500
					if done < runs {
						burst = min(burst, runs-done)
					}
					if err := p.Run(burst); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	producing.Wait()
}
