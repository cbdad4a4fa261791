//go:build linux

package perf

import (
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// blockedReads starts a ReadInto, a Records loop and a Batches loop that
// wait on r, and returns the channel each sends its error on.
func blockedReads(r *Reader) chan error {
	errs := make(chan error, 3)
	go func() {
		var rec Record
		errs <- r.ReadInto(&rec)
	}()
	go func() { errs <- bpftest.LoopUntilError(r.Records()) }()
	go func() { errs <- bpftest.LoopUntilError(batchRecords(r)) }()
	time.Sleep(20 * time.Millisecond) // all in their wait
	return errs
}

// expectErrors checks that every read blockedReads started ends with want.
func expectErrors(t *testing.T, errs chan error, want error) {
	t.Helper()
	for range cap(errs) {
		select {
		case err := <-errs:
			if !errors.Is(err, want) {
				t.Fatalf("a blocked read ended with %v, want %v", err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a blocked read did not end (want %v)", want)
		}
	}
}

// TestWaitsEnd: SetDeadline, Flush and Close from another goroutine end a
// blocked ReadInto, Records loop and Batches loop with their errors; records
// below the Watermark are returned before Flush's ErrFlushed.
func TestWaitsEnd(t *testing.T) {
	m := newEventArray(t)
	r := newTestReader(t, m, 1<<16, ReaderOptions{Watermark: 1 << 15})

	errs := blockedReads(r)
	r.SetDeadline(time.Now())
	expectErrors(t, errs, os.ErrDeadlineExceeded)
	r.SetDeadline(time.Time{})

	p := newProducer(t, m, 16)
	runOn(t, p, bpftest.CPUs(t)[0], 2) // below the watermark: wakes nobody
	r.SetDeadline(time.Now().Add(5 * time.Second))
	for range 2 {
		rec, err := r.Read()
		if err != nil {
			t.Fatalf("a record below the watermark: %v", err)
		}
		checkSample(t, rec.RawSample, 16)
	}
	r.SetDeadline(time.Time{})

	errs = blockedReads(r)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	expectErrors(t, errs, ErrFlushed)

	errs = blockedReads(r)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	expectErrors(t, errs, ErrClosed)
	if _, err := r.Read(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
}

// TestCloseAnyInstant: Close at a random instant while producers write on
// both CPUs and loops (Records and Batches) and reads run; every one ends
// with ErrClosed soon after, and Close from inside a loop body leaves the
// record it holds readable, and the rest of a Batches body's batch.
func TestCloseAnyInstant(t *testing.T) {
	bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
	for round := range 20 {
		m := newEventArray(t)
		before := bpftest.OpenResources(t)
		r := newTestReader(t, m, 8<<10, ReaderOptions{})
		p := newProducer(t, m, 64)
		stop := make(chan struct{})
		var producing, reading sync.WaitGroup
		for _, cpu := range bpftest.CPUs(t) {
			producing.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						runOn(t, p, cpu, 100)
					}
				}
			})
		}
		errs := make(chan error, 4)
		closeInBody := round%4 == 0  // from the first Records loop's body
		closeInBatch := round%4 == 2 // from the Batches loop's body
		reading.Go(func() {
			for b, err := range r.Batches() {
				if err != nil {
					errs <- err
					return
				}
				for sample := range b.Samples() {
					checkSample(t, sample, 64)
					if closeInBatch {
						r.Close()
					}
				}
			}
			errs <- errors.New("Batches loop ended without an error")
		})
		for k := range 2 {
			reading.Go(func() {
				for rec, err := range r.Records() {
					if err != nil {
						errs <- err
						return
					}
					if rec.LostSamples > 0 { // the buffers run full
						continue
					}
					checkSample(t, rec.RawSample, 64)
					if closeInBody && k == 0 {
						r.Close()
						checkSample(t, rec.RawSample, 64) // still mapped
					}
				}
				errs <- errors.New("loop ended without an error")
			})
		}
		reading.Go(func() { errs <- bpftest.ReadUntilError(r.ReadInto) })
		time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { reading.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: readers still running 5 s after Close", round)
		}
		close(stop)
		producing.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("round %d: a reader ended with %v, want ErrClosed", round, err)
			}
		}
		if bpftest.StillMapped(t, before) {
			t.Fatalf("round %d: resources not freed after every reader ended", round)
		}
	}
}

// TestNothingHeldBack: when a Records loop breaks, or its body panics, the
// kernel's data_tail covers every record it yielded; the reader stays
// usable and the next record is the one after.
func TestNothingHeldBack(t *testing.T) {
	r, checkTail := tenSamplesOnOneCPU(t)

	n := 0
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		checkSample(t, rec.RawSample, 32)
		if n++; n == 3 {
			break
		}
	}
	checkTail("a break at the third record", 3)

	bpftest.PanicsWith(t, "boom", "the body's", func() {
		for rec, err := range r.Records() {
			if err != nil {
				t.Fatal(err)
			}
			if seq := checkSample(t, rec.RawSample, 32); seq != 3 {
				t.Fatalf("record %d after the break, want 3", seq)
			}
			panic("boom")
		}
	})
	checkTail("a panic at the fourth record", 4)
	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if seq := checkSample(t, rec.RawSample, 32); seq != 4 {
		t.Fatalf("Read after the panic: record %d, want 4", seq)
	}
	checkTail("Read", 5)
}
