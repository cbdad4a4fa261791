//go:build linux

package ringbuf

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func newTestRawReader(tb testing.TB, size int) (*RawReader, *progs.Producer) {
	tb.Helper()
	m := newRingMap(tb, size)
	p := newProducer(tb, progs.RingbufSpec{Ring: m, Size: 8})
	rr, err := NewRawReader(m)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rr.Close() })
	return rr, p
}

// seqOf is the sequence number progs' producers write first.
func seqOf(sample []byte) uint64 { return binary.NativeEndian.Uint64(sample) }

// consumerPos is the position the kernel holds.
func (rr *RawReader) consumerPos() uint64 {
	p, err := rr.Positions()
	if err != nil {
		panic(err) // the tests ask an open reader
	}
	return p.Consumer
}

func TestRawReaderCommit(t *testing.T) {
	rr, p := newTestRawReader(t, 4096)
	produce(t, p, 3)
	start := rr.consumerPos()
	rr.SetDeadline(time.Now().Add(time.Second))

	err := rr.WithLease(func(l Lease) error {
		a, remain, err := l.ReadSample()
		if err != nil || seqOf(a) != 0 || remain != 32 {
			t.Fatalf("first sample %v remain %d, %v; want sequence 0, 32 bytes after it", a, remain, err)
		}
		if got := rr.consumerPos(); got != start {
			t.Errorf("the kernel has consumer position %d before Commit, want %d: the view is still held", got, start)
		}
		if got := rr.AvailableBytes(); got != 48 {
			t.Errorf("AvailableBytes %d before Commit, want 48: it counts what is not committed", got)
		}
		b, _, err := l.ReadSample()
		if err != nil || seqOf(b) != 1 || seqOf(a) != 0 {
			t.Fatalf("second sample %v, %v (first now %v)", b, err, a)
		}
		l.Commit()
		if got := rr.consumerPos(); got != start+32 {
			t.Errorf("the kernel has consumer position %d after Commit, want %d", got, start+32)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// What a lease reads and does not commit is committed when it ends,
	// and never read again.
	err = rr.WithLease(func(l Lease) error {
		c, _, err := l.ReadSample()
		if err != nil || seqOf(c) != 2 {
			t.Fatalf("third sample %v, %v; want sequence 2", c, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.consumerPos(); got != start+48 {
		t.Errorf("consumer position %d after the lease ended, want %d", got, start+48)
	}
	rr.SetDeadline(time.Now())
	err = rr.WithLease(func(l Lease) error {
		_, _, err := l.ReadSample()
		return err
	})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read on an empty ring: %v, want os.ErrDeadlineExceeded", err)
	}
}

func TestRawReaderMisuse(t *testing.T) {
	rr, p := newTestRawReader(t, 4096)
	produce(t, p, 2)
	rr.SetDeadline(time.Now().Add(time.Second))

	var kept Lease
	err := rr.WithLease(func(l Lease) error {
		kept = l
		if err := rr.WithLease(func(Lease) error { return nil }); !errors.Is(err, errConcurrent) {
			t.Errorf("WithLease inside a lease: %v, want errConcurrent", err)
		}
		entered := make(chan error)
		go func() {
			entered <- rr.WithLease(func(Lease) error {
				t.Error("a second goroutine entered a lease")
				return nil
			})
		}()
		if err := <-entered; !errors.Is(err, errConcurrent) {
			t.Errorf("WithLease from a second goroutine: %v, want errConcurrent", err)
		}
		_, _, err := l.ReadSample()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The Lease of a lease that ended neither reads nor commits, also while
	// another lease runs.
	if _, _, err := kept.ReadSample(); !errors.Is(err, errConcurrent) {
		t.Errorf("ReadSample on an ended Lease: %v, want errConcurrent", err)
	}
	err = rr.WithLease(func(l Lease) error {
		if _, _, err := kept.ReadSample(); !errors.Is(err, errConcurrent) {
			t.Errorf("ReadSample on an ended Lease during another: %v, want errConcurrent", err)
		}
		before := rr.consumerPos()
		sample, _, err := l.ReadSample()
		if err != nil || seqOf(sample) != 1 {
			t.Fatalf("sample %v, %v; want sequence 1", sample, err)
		}
		kept.Commit()
		if got := rr.consumerPos(); got != before {
			t.Errorf("an ended Lease's Commit moved the consumer position to %d from %d", got, before)
		}
		var zero Lease
		if _, _, err := zero.ReadSample(); !errors.Is(err, errConcurrent) {
			t.Errorf("ReadSample on a zero Lease: %v, want errConcurrent", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A lease that read samples without committing and then waits has told
// the kernel everything: the kernel wakes it for the next record, and it
// sleeps without looking again and again.
func TestRawReaderLeaseNeverSpins(t *testing.T) {
	rr, p := newTestRawReader(t, 4096)
	produce(t, p, 2)
	got := make(chan uint64, 3)
	usage := make(chan time.Duration, 1)
	finished := make(chan struct{})
	t.Cleanup(func() { rr.Close(); <-finished })
	go func() {
		defer close(finished)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		before, err := cpustat.ThreadClock()
		if err != nil {
			t.Error(err)
		}
		err = rr.WithLease(func(l Lease) error {
			for range 3 {
				sample, _, err := l.ReadSample()
				if err != nil {
					return err
				}
				got <- seqOf(sample)
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrClosed) { // closed: the test failed early
			t.Error(err)
		}
		after, _ := cpustat.ThreadClock()
		usage <- after - before
		close(got)
	}()
	for want := range uint64(2) {
		if seq := <-got; seq != want {
			t.Fatalf("sample %d, want %d", seq, want)
		}
	}
	// The third ReadSample waits: it committed the first two first.
	deadline := time.Now().Add(5 * time.Second)
	for rr.AvailableBytes() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := rr.AvailableBytes(); n != 0 {
		t.Fatalf("AvailableBytes %d while the lease waits: it did not commit before waiting", n)
	}
	const idle = 300 * time.Millisecond
	time.Sleep(idle)
	produce(t, p, 1) // wakes the reader only if the kernel knows it consumed all
	select {
	case seq := <-got:
		if seq != 2 {
			t.Fatalf("sample %d, want 2", seq)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lease was not woken by the next record")
	}
	<-got
	if cpu := <-usage; cpu > idle/10 {
		t.Errorf("the lease's thread used %v of CPU while it waited %v: it spins", cpu, idle)
	}
}

// Close, Flush and SetDeadline, called from another goroutine while a lease
// waits, end the wait with their error; Close also ends the next leases.
func TestRawReaderInterruptWait(t *testing.T) {
	for _, tt := range []struct {
		name      string
		interrupt func(*RawReader) error
		want      error
	}{
		{"Close", (*RawReader).Close, ErrClosed},
		{"Flush", (*RawReader).Flush, ErrFlushed},
		{"SetDeadline", func(rr *RawReader) error { rr.SetDeadline(time.Now()); return nil }, os.ErrDeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rr, p := newTestRawReader(t, 4096)
			produce(t, p, 1)
			var reading atomic.Bool
			done := make(chan error)
			go func() {
				done <- rr.WithLease(func(l Lease) error {
					if _, _, err := l.ReadSample(); err != nil {
						return err
					}
					reading.Store(true)
					_, _, err := l.ReadSample()
					return err
				})
			}()
			for !reading.Load() {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // let it wait
			if err := tt.interrupt(rr); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, tt.want) {
					t.Fatalf("lease ended with %v, want %v", err, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s did not end the wait", tt.name)
			}
			err := rr.WithLease(func(Lease) error { return nil })
			if tt.want == ErrClosed {
				if !errors.Is(err, ErrClosed) {
					t.Errorf("WithLease after Close: %v, want ErrClosed", err)
				}
				if n := rr.AvailableBytes(); n != 0 {
					t.Errorf("AvailableBytes %d after Close", n)
				}
			} else if err != nil {
				t.Errorf("WithLease after %s: %v", tt.name, err)
			}
		})
	}
}

// A panic in the lease function commits what it read and frees the
// reader for the next lease.
func TestRawReaderLeasePanics(t *testing.T) {
	rr, p := newTestRawReader(t, 4096)
	produce(t, p, 2)
	rr.SetDeadline(time.Now().Add(time.Second))
	bpftest.PanicsWith(t, "boom", "the lease's", func() {
		rr.WithLease(func(l Lease) error {
			if _, _, err := l.ReadSample(); err != nil {
				t.Fatal(err)
			}
			panic("boom")
		})
	})
	err := rr.WithLease(func(l Lease) error {
		sample, _, err := l.ReadSample()
		if err == nil && seqOf(sample) != 1 {
			t.Errorf("sample %d after the panic, want 1: the panicking lease's sample is consumed", seqOf(sample))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Close from inside a lease: the samples it holds stay readable, then
// ErrClosed, and the ring is unmapped when the lease ends.
func TestRawReaderCloseInsideLease(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 8})
	before := bpftest.OpenResources(t)
	rr, err := NewRawReader(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rr.Close() })
	produce(t, p, 2)
	rr.SetDeadline(time.Now().Add(time.Second))
	err = rr.WithLease(func(l Lease) error {
		a, _, err := l.ReadSample()
		if err != nil {
			return err
		}
		if err := rr.Close(); err != nil {
			return err
		}
		b, _, err := l.ReadSample()
		if err != nil || seqOf(a) != 0 || seqOf(b) != 1 {
			t.Errorf("samples %v %v, %v after Close; want 0 and 1: they were claimed", a, b, err)
		}
		_, _, err = l.ReadSample()
		return err
	})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("lease ended with %v, want ErrClosed", err)
	}
	if bpftest.StillMapped(t, before) {
		t.Error("the ring is still mapped after the lease that closed the reader ended")
	}
}

// A sample a producer is still writing stops the walk: the lease backs
// off, keeping its views, and reads it once it is submitted. Discarded samples are
// skipped; a corrupt header is an error.
func TestRawReaderFakeRing(t *testing.T) {
	f := newFakeRing(t, 4096)
	rr, err := f.rawReader(t)
	if err != nil {
		t.Fatal(err)
	}
	f.write([]byte("first..."))
	f.commit(f.reserve([]byte("discarded")), len("discarded"), true)
	busy := f.reserve([]byte("busy...."))
	rr.SetDeadline(time.Now().Add(5 * time.Second))
	err = rr.WithLease(func(l Lease) error {
		a, _, err := l.ReadSample()
		if err != nil || string(a) != "first..." {
			t.Fatalf("first sample %q, %v", a, err)
		}
		go func() {
			time.Sleep(20 * time.Millisecond)
			f.commit(busy, len("busy...."), false)
		}()
		b, remain, err := l.ReadSample()
		if err != nil || string(b) != "busy...." || remain != 0 {
			t.Fatalf("second sample %q remain %d, %v", b, remain, err)
		}
		if got := f.positions[0]; got != 0 || string(a) != "first..." {
			t.Errorf("consumer position %d, first view %q after waiting for a busy record: want 0 and the view kept", got, a)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pos := f.producer()
	f.writeHeader(pos, 4000) // claims more than is produced
	atomic.StoreUint64(&f.positions[1], pos+16)
	err = rr.WithLease(func(l Lease) error {
		_, _, err := l.ReadSample()
		return err
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt record: %v, want ErrCorrupt", err)
	}
}

// Records produced while a lease reads are claimed without a commit: the
// views read before stay valid.
func TestRawReaderViewsAcrossClaims(t *testing.T) {
	rr, p := newTestRawReader(t, 4096)
	produce(t, p, 2)
	start := rr.consumerPos()
	rr.SetDeadline(time.Now().Add(time.Second))
	err := rr.WithLease(func(l Lease) error {
		a, remain, err := l.ReadSample()
		if err != nil || remain != 16 {
			t.Fatalf("first sample: remain %d, %v; want 16", remain, err)
		}
		b, remain, err := l.ReadSample()
		if err != nil || remain != 0 {
			t.Fatalf("second sample: remain %d, %v; want 0", remain, err)
		}
		produce(t, p, 2)
		c, remain, err := l.ReadSample()
		if err != nil || seqOf(c) != 2 || remain != 16 {
			t.Fatalf("third sample %v remain %d, %v; want sequence 2, 16 bytes after it", c, remain, err)
		}
		if got := rr.consumerPos(); got != start || seqOf(a) != 0 || seqOf(b) != 1 {
			t.Errorf("consumer position %d (want %d), views %v %v: the views read before were given up", got, start, a, b)
		}
		l.Commit()
		if got := rr.consumerPos(); got != start+48 {
			t.Errorf("consumer position %d after Commit, want %d", got, start+48)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRawReaderKeepsViewWithRemain: a sample handed out with remain > 0
// (a discarded record after it) keeps its view while the next ReadSample
// waits: the lease commits before a wait only after remain 0.
func TestRawReaderKeepsViewWithRemain(t *testing.T) {
	f := newFakeRing(t, 4096)
	rr, err := f.rawReader(t)
	if err != nil {
		t.Fatal(err)
	}
	f.commit(f.reserve([]byte("zero....")), 8, true)
	f.write([]byte("one....."))
	f.commit(f.reserve([]byte("two.....")), 8, true)
	rr.SetDeadline(time.Now().Add(5 * time.Second))
	err = rr.WithLease(func(l Lease) error {
		view, remain, err := l.ReadSample()
		if err != nil || string(view) != "one....." || remain == 0 {
			t.Fatalf("first sample %q remain %d, %v; want one..... and remain > 0", view, remain, err)
		}
		go func() {
			time.Sleep(30 * time.Millisecond)
			if got := atomic.LoadUint64(&f.positions[0]); got != 0 {
				t.Errorf("consumer position %d while ReadSample waits, want 0: the view of a sample with remain %d was given up", got, remain)
			}
			f.write([]byte("three..."))
		}()
		next, _, err := l.ReadSample()
		if err != nil || string(next) != "three..." {
			t.Fatalf("sample after the wait %q, %v", next, err)
		}
		if string(view) != "one....." {
			t.Errorf("the first view reads %q after the wait", view)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := atomic.LoadUint64(&f.positions[0]), f.producer(); got != want {
		t.Errorf("consumer position %d after the lease, want %d", got, want)
	}
}
