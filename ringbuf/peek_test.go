//go:build linux

package ringbuf

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// TestPeekBatchRevoked: a peeker alone walks a batch without the lock; a
// Read from elsewhere takes back what the peeker was not handed, leaves
// its view alone, and nothing is read twice or lost.
func TestPeekBatchRevoked(t *testing.T) {
	f := newFakeRing(t, 4096)
	r, err := f.reader(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		f.write([]byte(s))
	}
	peek := func(want string) {
		t.Helper()
		rec, err := r.Peek()
		if err != nil || string(rec.RawSample) != want {
			t.Fatalf("Peek: %q, %v; want %q", rec.RawSample, err, want)
		}
	}
	consume := func() {
		t.Helper()
		if err := r.Consume(); err != nil {
			t.Fatal(err)
		}
	}
	peek("a")
	if !r.peek.fast {
		t.Fatal("a peeker alone did not get a batch")
	}
	consume()
	if got := atomic.LoadUint64(&f.positions[0]); got != 16 {
		t.Fatalf("kernel's consumer position %d after Consume, want 16", got)
	}
	peek("b") // without the lock
	rec, err := r.Read()
	if err != nil || string(rec.RawSample) != "c" {
		t.Fatalf("Read beside a peek view: %q, %v; want \"c\"", rec.RawSample, err)
	}
	peek("b") // the view survives the revoke
	consume()
	peek("d")
	consume()
	if rec, err := r.Read(); err != nil || string(rec.RawSample) != "e" {
		t.Fatalf("Read: %q, %v; want \"e\"", rec.RawSample, err)
	}
	r.SetDeadline(time.Now())
	if _, err := r.Peek(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Peek of an empty ring: %v", err)
	}
	if got, want := atomic.LoadUint64(&f.positions[0]), f.producer(); got != want {
		t.Fatalf("kernel's consumer position %d, want %d", got, want)
	}
	if n := r.AvailableBytes(); n != 0 {
		t.Fatalf("AvailableBytes %d after reading everything", n)
	}
}

// TestPeekBatchNotStranded: a peeker that consumed its batch and stopped
// holds nothing back: records written after it go to a Records loop, and
// the kernel sees them consumed when the loop ends.
func TestPeekBatchNotStranded(t *testing.T) {
	f := newFakeRing(t, 4096)
	r, err := f.reader(t)
	if err != nil {
		t.Fatal(err)
	}
	f.write([]byte("one"))
	f.write([]byte("two"))
	for range 2 {
		if _, err := r.Peek(); err != nil {
			t.Fatal(err)
		}
		if err := r.Consume(); err != nil {
			t.Fatal(err)
		}
	}
	f.write([]byte("three"))
	f.write([]byte("four"))
	r.SetDeadline(time.Now())
	var got []string
	for rec, err := range r.Records() {
		if err != nil {
			break
		}
		got = append(got, string(rec.RawSample))
	}
	if len(got) != 2 || got[0] != "three" || got[1] != "four" {
		t.Fatalf("Records after the peeker stopped: %q", got)
	}
	if got, want := atomic.LoadUint64(&f.positions[0]), f.producer(); got != want {
		t.Fatalf("kernel's consumer position %d, want %d", got, want)
	}
}

// TestPeekBatchConcurrentRevoke: a peeker that mostly runs alone, and so
// walks batches without the lock, races with a Read now and then that
// revokes them, and with producers on both CPUs: every record arrives once.
func TestPeekBatchConcurrentRevoke(t *testing.T) {
	if err := progs.HaveAtomicFetch(); err != nil {
		t.Skipf("producers on two CPUs need atomic sequence numbers: %v", err)
	}
	m := newRingMap(t, 64<<10)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 24, Pattern: true})
	r := newTestReader(t, m)

	var (
		mu      sync.Mutex
		tracker seqcheck.Tracker
		fast    int
		errs    []error
	)
	deliver := func(sample []byte) {
		seq, err := progs.CheckRecord(sample, 24, true)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		tracker.Add(seq)
		mu.Unlock()
	}
	var running sync.WaitGroup
	running.Add(2)
	go func() {
		defer running.Done()
		for {
			rec, err := r.Peek()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			if r.peek.fast {
				fast++
			}
			deliver(rec.RawSample)
			if err := r.Consume(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer running.Done()
		for {
			time.Sleep(50 * time.Microsecond)
			rec, err := r.Read()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			deliver(rec.RawSample)
		}
	}()
	produceOnBothCPUs(t, []*progs.Producer{p}, 20_000, func() bool { return false })
	r.SetDeadline(time.Now().Add(200 * time.Millisecond))
	within(t, 10*time.Second, "readers", running.Wait)
	for _, err := range errs {
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("reader ended with %v, want the deadline", err)
		}
	}
	produced, dropped, err := p.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if err := tracker.Check(produced, dropped); err != nil {
		t.Fatal(err)
	}
	if fast == 0 {
		t.Error("the peeker never walked a batch without the lock: the test shows nothing")
	}
	t.Logf("%d produced, %d dropped, %d records peeked from a batch", produced, dropped, fast)
}
