//go:build linux

package ringbuf_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// e2eRing is the ring of the end-to-end benchmark: large enough to ride
// out scheduling hiccups, small enough to stay in the last-level cache's
// neighbourhood like a production ring.
const e2eRing = 16 << 20

// BenchmarkEndToEnd drains a ring with Records while a producer goroutine
// on another CPU fills it with test-run as fast as it can: the reader's
// throughput when it also has to wait for records. wake=wakeup submits
// with flags 0 and the reader sleeps in epoll; wake=poll submits with
// BPF_RB_NO_WAKEUP and the reader polls with a 1 ms deadline. An op is one
// record delivered; full-% is the share of records the program could not
// reserve because the ring was full, counted by the program itself.
func BenchmarkEndToEnd(b *testing.B) {
	for _, size := range []int{16, 128, 2048} {
		for _, wake := range []struct {
			name  string
			flags uint64
		}{{"wakeup", 0}, {"poll", progs.NoWakeup}} {
			b.Run(fmt.Sprintf("size=%d/wake=%s", size, wake.name), func(b *testing.B) {
				runEndToEnd(b, size, wake.flags)
			})
		}
	}
}

func runEndToEnd(b *testing.B, size int, flags uint64) {
	ring, err := progs.NewRing(e2eRing)
	bpftest.SkipIfNoRingBuf(b, err)
	b.Cleanup(func() { ring.Close() })
	producer, err := progs.NewRingbufProducer(progs.RingbufSpec{Ring: ring, Size: size, Flags: flags})
	bpftest.SkipIfNoRingBuf(b, err)
	b.Cleanup(func() { producer.Close() })
	rd, err := ringbuf.NewReader(ring)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rd.Close() })

	poll := flags&progs.NoWakeup != 0
	consumerCPU := runtime.NumCPU() - 1
	unpin, err := cpustat.Pin(consumerCPU)
	if err != nil {
		b.Fatal(err)
	}
	defer unpin()

	var (
		stop    atomic.Bool
		running sync.WaitGroup
		runErr  error
	)
	running.Add(1)
	go func() {
		defer running.Done()
		if consumerCPU > 0 {
			unpin, err := cpustat.Pin(0)
			if err != nil {
				runErr = err
				return
			}
			defer unpin()
		}
		for !stop.Load() {
			if err := producer.Run(1024); err != nil {
				runErr = err
				return
			}
		}
	}()

	// want is the next sequence number expected at the least: the
	// producer is one goroutine, so numbers only grow; a gap is a record
	// the program counted as dropped, a repeat or a step back is a bug.
	var delivered, want uint64
	consume := func(limit int, deadline time.Duration) error {
		for {
			if deadline > 0 {
				rd.SetDeadline(time.Now().Add(deadline))
			}
			for rec, err := range rd.Records() {
				if err != nil {
					if errors.Is(err, os.ErrDeadlineExceeded) && limit > 0 {
						break // poll again
					}
					return err
				}
				seq, err := progs.CheckRecord(rec.RawSample, size, false)
				if err != nil {
					return err
				}
				if seq < want {
					return fmt.Errorf("record %d after %d: repeated or out of order", seq, want-1)
				}
				want = seq + 1
				if delivered++; limit > 0 && delivered == uint64(limit) {
					return nil
				}
			}
		}
	}

	b.SetBytes(int64(size))
	b.ResetTimer()
	deadline := time.Duration(0)
	if poll {
		deadline = time.Millisecond
	}
	if err := consume(b.N, deadline); err != nil {
		stop.Store(true)
		running.Wait()
		b.Fatal(err)
	}
	b.StopTimer()
	elapsed := b.Elapsed()
	stop.Store(true)
	running.Wait()
	if runErr != nil {
		b.Fatal(runErr)
	}

	// Account for every record: what is left in the ring, then the counts.
	if err := rd.Flush(); err != nil {
		b.Fatal(err)
	}
	rd.SetDeadline(time.Time{})
	if err := consume(0, 0); !errors.Is(err, ringbuf.ErrFlushed) {
		b.Fatalf("draining the rest: %v", err)
	}
	produced, dropped, err := producer.Counts()
	if err != nil {
		b.Fatal(err)
	}
	if delivered+dropped != produced {
		b.Fatalf("delivered %d + dropped %d != produced %d", delivered, dropped, produced)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds()/1e6, "Mrec/s")
	b.ReportMetric(100*float64(dropped)/float64(max(produced, 1)), "full-%")
}

// BenchmarkWakeBehindHeldView measures how long a record takes to reach a
// Read blocked in another goroutine while a Peek view pins the consumer
// position, so that the kernel wakes nobody for it (the reader then looks
// again every heldClaimPoll). An op is one record: produced with flags 0
// while the Read sleeps, then received; view-wait-ms is the median
// latency, held=no the same without a held view (the kernel's wakeup).
func BenchmarkWakeBehindHeldView(b *testing.B) {
	for _, held := range []bool{false, true} {
		b.Run(map[bool]string{false: "held=no", true: "held=yes"}[held], func(b *testing.B) {
			m, err := progs.NewRing(1 << 20)
			bpftest.SkipIfNoRingBuf(b, err)
			b.Cleanup(func() { m.Close() })
			p, err := progs.NewRingbufProducer(progs.RingbufSpec{Ring: m, Size: 16})
			bpftest.SkipIfNoRingBuf(b, err)
			b.Cleanup(func() { p.Close() })
			rd, err := ringbuf.NewReader(m)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { rd.Close() })
			if held {
				if err := p.Run(1); err != nil {
					b.Fatal(err)
				}
				if _, err := rd.Peek(); err != nil {
					b.Fatal(err)
				}
			}
			latencies := make([]time.Duration, 0, b.N)
			got := make(chan time.Time)
			go func() {
				var rec ringbuf.Record
				for rd.ReadInto(&rec) == nil {
					got <- time.Now()
				}
				close(got)
			}()
			b.ResetTimer()
			for range b.N {
				time.Sleep(2 * time.Millisecond) // the Read is asleep by now
				start := time.Now()
				if err := p.Run(1); err != nil {
					b.Fatal(err)
				}
				end, ok := <-got
				if !ok {
					b.Fatal("reader stopped")
				}
				latencies = append(latencies, end.Sub(start))
			}
			b.StopTimer()
			slices.Sort(latencies)
			b.ReportMetric(float64(latencies[len(latencies)/2])/1e6, "view-wait-ms")
		})
	}
}
