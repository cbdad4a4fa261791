package ringbuf

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// TestConcurrentExactlyOnce runs producers on both CPUs into a small ring
// while several goroutines read it every way at once: each record arrives
// exactly once, and what does not arrive the program counted as dropped.
func TestConcurrentExactlyOnce(t *testing.T) {
	const (
		size      = 48
		perWorker = 100_000
	)
	m := newRingMap(t, 256<<10) // small enough that producers also hit a full ring
	if err := progs.HaveAtomicFetch(); err != nil {
		t.Skipf("producers on two CPUs need atomic sequence numbers: %v", err)
	}
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: size, Pattern: true})
	r := newTestReader(t, m)

	var (
		mu        sync.Mutex
		seqs      []uint64
		errs      []error
		consumers int // that received at least one record
	)
	collect := func(local []uint64, err error) {
		mu.Lock()
		defer mu.Unlock()
		seqs = append(seqs, local...)
		errs = append(errs, err)
		if len(local) > 0 {
			consumers++
		}
	}
	check := func(sample []byte) uint64 {
		seq, err := progs.CheckRecord(sample, size, true)
		if err != nil {
			t.Error(err)
		}
		return seq
	}

	var running sync.WaitGroup
	running.Add(4)
	for range 2 {
		go func() {
			defer running.Done()
			var local []uint64
			for rec, err := range r.Records() {
				if err != nil {
					collect(local, err)
					return
				}
				local = append(local, check(rec.RawSample))
			}
		}()
	}
	go func() {
		defer running.Done()
		var local []uint64
		var rec Record
		for {
			if err := r.ReadInto(&rec); err != nil {
				collect(local, err)
				return
			}
			local = append(local, check(rec.RawSample))
		}
	}()
	go func() {
		defer running.Done()
		var local []uint64
		for {
			rec, err := r.Peek()
			if err != nil {
				collect(local, err)
				return
			}
			local = append(local, check(rec.RawSample))
			if err := r.Consume(); err != nil {
				collect(local, err)
				return
			}
		}
	}()

	var producers sync.WaitGroup
	for cpu := range 2 {
		producers.Add(1)
		go func() {
			defer producers.Done()
			if unpin, err := cpustat.Pin(cpu); err == nil {
				defer unpin()
			}
			for range perWorker / 1000 {
				if err := p.Run(1000); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	producers.Wait()
	r.SetDeadline(time.Now().Add(200 * time.Millisecond))
	within(t, 10*time.Second, "consumers", running.Wait)

	for _, err := range errs {
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("consumer ended with %v, want the deadline", err)
		}
	}
	produced, dropped, err := p.Counts()
	if err != nil {
		t.Fatal(err)
	}
	var tracker seqcheck.Tracker
	for _, s := range seqs {
		tracker.Add(s)
	}
	if err := tracker.Check(produced, dropped); err != nil {
		t.Fatal(err)
	}
	if consumers < 2 {
		t.Fatalf("only %d consumer received records: nothing ran concurrently", consumers)
	}
	t.Logf("%d produced, %d delivered to %d consumers, %d dropped on a full ring",
		produced, tracker.Delivered(), consumers, dropped)
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
}
