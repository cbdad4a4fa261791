//go:build linux

package perf

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// TestConcurrentExactlyOnce: producers of three record sizes, each running
// on both CPUs, fill 16 KiB per-CPU buffers (so they also run full) while
// readers of every style take records at once: two Records loops that
// break at random and start again, one that never breaks, a Batches loop
// that breaks its inner and outer loops at random, and ReadInto.
// Every record arrives exactly once; what does not arrive the programs
// counted as dropped, and the kernel's lost-sample records never count
// more than that.
func TestConcurrentExactlyOnce(t *testing.T) {
	const perCPU = 20_000
	m := newEventArray(t)
	bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
	sizes := []int{16, 61, 200}
	producers := make([]*progs.Producer, len(sizes))
	for i, size := range sizes {
		producers[i] = newProducer(t, m, size)
	}
	book := bpftest.NewLedger(progs.CheckRecord, rawLen, producers, sizes)
	r := newTestReader(t, m, 16<<10, ReaderOptions{})

	const readers = 5
	var (
		mu       sync.Mutex
		received [readers]int
		errs     []error
	)
	// deliver books a record, and that reader id had it; book.Check
	// reports a wrong one.
	deliver := func(id int, rec *Record) {
		deliverRecord(book, rec)
		mu.Lock()
		defer mu.Unlock()
		received[id]++
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
			for {
				stop, n := 1+rand.IntN(50), 0
				for b, err := range r.Batches() {
					if err != nil {
						return err
					}
					for sample := range b.Samples() {
						deliver(id, &Record{CPU: b.CPU(), RawSample: sample})
						if n++; n%stop == 0 {
							break // the rest of the batch goes back
						}
					}
					if lost := b.LostSamples(); lost > 0 {
						deliver(id, &Record{CPU: b.CPU(), LostSamples: lost})
					}
					if n >= 5*stop {
						break
					}
				}
			}
		},
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

	bpftest.ProduceOn(t, producers, bpftest.CPUs(t), perCPU, nil)
	// Everything produced is in the buffers now: wait until it is read.
	for deadline := time.Now().Add(10 * time.Second); !book.Complete(t) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	reading.Wait()

	book.Check(t)
	for _, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("a reader ended with %v, want ErrClosed", err)
		}
	}
	t.Logf("records per reader %v, %d reported lost", received, book.Lost())
}
