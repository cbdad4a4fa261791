//go:build linux

package perf

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// TestConcurrentExactlyOnce: producers of three record sizes, each running
// on both CPUs, fill 16 KiB per-CPU buffers (so they also run full) while
// readers of every style take records at once: two Records loops that
// break at random and start again, one that never breaks, and ReadInto.
// Every record arrives exactly once; what does not arrive the programs
// counted as dropped, and the kernel's lost-sample records never count
// more than that.
func TestConcurrentExactlyOnce(t *testing.T) {
	const perCPU = 20_000
	m := newEventArray(t)
	if err := progs.HaveAtomicFetch(); err != nil {
		t.Skipf("producers on two CPUs need atomic sequence numbers: %v", err)
	}
	sizes := []int{16, 61, 200}
	producers := make([]*progs.Producer, len(sizes))
	for i, size := range sizes {
		producers[i] = newProducer(t, m, size)
	}
	r := newTestReader(t, m, 16<<10, ReaderOptions{})

	const readers = 4
	var (
		mu       sync.Mutex
		trackers = make([]seqcheck.Tracker, len(sizes))
		received [readers]int
		lost     uint64
		errs     []error
	)
	deliver := func(id int, rec *Record) {
		mu.Lock()
		defer mu.Unlock()
		received[id]++
		if rec.LostSamples > 0 {
			lost += rec.LostSamples
			return
		}
		i := slices.IndexFunc(sizes, func(size int) bool { return rawLen(size) == len(rec.RawSample) })
		if i < 0 {
			t.Errorf("sample of %d bytes: no producer makes that size", len(rec.RawSample))
			return
		}
		seq, err := progs.CheckRecord(rec.RawSample[:sizes[i]], sizes[i], true)
		if err != nil {
			t.Error(err)
		}
		trackers[i].Add(seq)
	}
	loop := func(id int, breaks bool) error {
		for {
			stop, n := 1+rand.IntN(50), 0
			for rec, err := range r.Records() {
				if err != nil {
					return err
				}
				deliver(id, rec)
				if n++; breaks && n == stop {
					break
				}
			}
		}
	}
	reads := []func(id int) error{
		func(id int) error { return loop(id, true) },
		func(id int) error { return loop(id, true) },
		func(id int) error { return loop(id, false) },
		func(id int) error {
			var rec Record
			for {
				if err := r.ReadInto(&rec); err != nil {
					return err
				}
				deliver(id, &rec)
			}
		},
	}
	var reading sync.WaitGroup
	for id, read := range reads {
		reading.Go(func() {
			err := read(id)
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		})
	}

	produceOnBothCPUs(t, producers, perCPU)
	// Everything produced is in the buffers now: wait until it is read.
	var produced, dropped []uint64
	deadline := time.Now().Add(10 * time.Second)
	for {
		produced, dropped = produced[:0], dropped[:0]
		done := true
		for i, p := range producers {
			n, d, err := p.Counts()
			if err != nil {
				t.Fatal(err)
			}
			produced, dropped = append(produced, n), append(dropped, d)
			mu.Lock()
			done = done && trackers[i].Delivered()+d == n
			mu.Unlock()
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	reading.Wait()

	var allDropped uint64
	for i := range producers {
		if err := trackers[i].Check(produced[i], dropped[i]); err != nil {
			t.Errorf("%d-byte records: %v", sizes[i], err)
		}
		allDropped += dropped[i]
	}
	if lost > allDropped {
		t.Errorf("the kernel reported %d lost samples, the programs dropped %d", lost, allDropped)
	}
	for _, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("a reader ended with %v, want ErrClosed", err)
		}
	}
	t.Logf("records per reader %v, %d dropped, %d reported lost", received, allDropped, lost)
}
