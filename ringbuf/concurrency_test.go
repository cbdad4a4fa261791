//go:build linux

package ringbuf

import (
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// TestConcurrentExactlyOnce: producers of three record sizes, each running
// on both CPUs, fill a 16 KiB ring (so it also runs full) while readers of
// every style take records at once: two Records loops that break at random
// and start again, ReadInto and Peek+Consume. Every record arrives exactly
// once; what does not arrive the programs counted as dropped or discarded;
// every reader gets records.
func TestConcurrentExactlyOnce(t *testing.T) {
	const perCPU = 20_000
	m := newRingMap(t, 16<<10)
	bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
	producers, book := newProducers(t, mixedSpecs(m))
	r := newTestReader(t, m)

	const readers = 4
	var (
		mu       sync.Mutex
		received [readers]int
		errs     []error
	)
	// deliver books a record, and that reader id had it; book.Check
	// reports a wrong one.
	deliver := func(id int, sample []byte) {
		book.Deliver(-1, sample)
		mu.Lock()
		defer mu.Unlock()
		received[id]++
	}
	finish := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	reads := []func(id int) error{
		func(id int) error { // Records, breaking after 1 to 50 records
			for {
				stop, n := 1+rand.IntN(50), 0
				for rec, err := range r.Records() {
					if err != nil {
						return err
					}
					deliver(id, rec.RawSample)
					if n++; n == stop {
						break
					}
				}
			}
		},
		nil, // a second Records loop, set below
		func(id int) error {
			var rec Record
			for {
				if err := r.ReadInto(&rec); err != nil {
					return err
				}
				deliver(id, rec.RawSample)
			}
		},
		func(id int) error {
			for {
				rec, err := r.Peek()
				if err != nil {
					return err
				}
				deliver(id, rec.RawSample)
				if err := r.Consume(); err != nil {
					return err
				}
			}
		},
	}
	reads[1] = reads[0]
	var running sync.WaitGroup
	for id, read := range reads {
		running.Add(1)
		go func() {
			defer running.Done()
			finish(read(id))
		}()
	}

	// Produce at least perCPU records per producer and CPU, and on until
	// every reader has had some: on two CPUs shared by ten goroutines the
	// scheduler may leave one out for a while.
	allServed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !slices.Contains(received[:], 0)
	}
	bpftest.ProduceOn(t, producers, bpftest.CPUs(t), perCPU, func() bool { return !allServed() })
	r.SetDeadline(time.Now().Add(200 * time.Millisecond))
	bpftest.Within(t, 10*time.Second, "readers", running.Wait)

	for _, err := range errs {
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("reader ended with %v, want the deadline", err)
		}
	}
	book.Check(t)
	for id, n := range received {
		if n == 0 {
			t.Errorf("reader %d received no records: it did not run alongside the others", id)
		}
	}
	t.Logf("records per reader (Records, Records, ReadInto, Peek): %v", received)
}

func TestNoAllocsPerRecord(t *testing.T) {
	m := newRingMap(t, 4<<20)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16})
	r := newTestReader(t, m)
	produce(t, p, 100_000)

	rec := Record{RawSample: make([]byte, 0, 64)}
	if n := testing.AllocsPerRun(1000, func() {
		if err := r.ReadInto(&rec); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ReadInto with a reused Record: %v allocs per record", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		if err := r.PeekInto(&rec); err != nil {
			t.Fatal(err)
		}
		if err := r.Consume(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("PeekInto+Consume: %v allocs per record", n)
	}
	loop := func(records int) func() {
		return func() {
			n := 0
			for _, err := range r.Records() {
				if err != nil {
					t.Fatal(err)
				}
				if n++; n == records {
					break
				}
			}
		}
	}
	one, hundred := testing.AllocsPerRun(50, loop(1)), testing.AllocsPerRun(50, loop(100))
	if hundred > one {
		t.Errorf("Records: %v allocs per loop of 100 records, %v per loop of one: it allocates per record", hundred, one)
	}
	batches := func(records int) func() {
		return func() {
			n := 0
			for b, err := range r.Batches() {
				if err != nil {
					t.Fatal(err)
				}
				for range b.Samples() {
					if n++; n == records {
						return
					}
				}
			}
		}
	}
	one, hundred = testing.AllocsPerRun(50, batches(1)), testing.AllocsPerRun(50, batches(100))
	if hundred > one {
		t.Errorf("Batches: %v allocs per loop of 100 records, %v per loop of one: it allocates per record", hundred, one)
	}
}
