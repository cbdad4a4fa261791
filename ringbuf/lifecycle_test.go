//go:build linux

package ringbuf

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func TestCloseUnblocks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		waiters int // Peek serves one goroutine at a time
		block   func(r *Reader) error
	}{
		{"Read", 3, func(r *Reader) error { _, err := r.Read(); return err }},
		{"Peek", 1, func(r *Reader) error { _, err := r.Peek(); return err }},
		{"Records", 3, func(r *Reader) error {
			for _, err := range r.Records() {
				if err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newRingMap(t, 4096)
			before := bpftest.OpenResources(t)
			r := newTestReader(t, m)
			var wg sync.WaitGroup
			errs := make([]error, tc.waiters)
			for i := range errs {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = tc.block(r) }()
			}
			time.Sleep(20 * time.Millisecond)
			// Close from several goroutines at once, more than once.
			for range 3 {
				go r.Close()
			}
			bpftest.Within(t, 5*time.Second, tc.name, wg.Wait)
			for _, err := range errs {
				if !errors.Is(err, ErrClosed) {
					t.Errorf("blocked %s returned %v, want ErrClosed", tc.name, err)
				}
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := r.Read(); !errors.Is(err, ErrClosed) {
				t.Errorf("Read after Close: %v", err)
			}
			if bpftest.StillMapped(t, before) {
				t.Error("mapping not released after every reader left")
			}
		})
	}
}

// TestCloseWhileBodyHoldsView: the body's view stays mapped and intact
// until the body returns; the loop yields the rest of its batch, then ends
// with ErrClosed, and the kernel's consumer position covers all of it.
func TestCloseWhileBodyHoldsView(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 200, Pattern: true})
	before := bpftest.OpenResources(t)
	r := newTestReader(t, m)
	produce(t, p, 5)
	var last error
	n := 0
	for rec, err := range r.Records() {
		if err != nil {
			last = err
			break
		}
		n++
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if !bpftest.StillMapped(t, before) {
			t.Fatal("Close unmapped the ring under a running body")
		}
		runtime.GC()
		if _, err := progs.CheckRecord(rec.RawSample, 200, true); err != nil {
			t.Fatalf("view changed after Close: %v", err)
		}
	}
	// A batch of a 4 KiB ring is 512 bytes and the record crossing them:
	// three of 208 bytes. The other two stay for the next reader.
	if n != 3 || !errors.Is(last, ErrClosed) {
		t.Fatalf("loop yielded %d records and ended with %v, want the batch of 3 and ErrClosed", n, last)
	}
	if bpftest.StillMapped(t, before) {
		t.Fatal("mapping not released after the body returned")
	}
	if got, want := kernelConsumer(t, m), uint64(3*208); got != want {
		t.Fatalf("consumer position %d published after the loop, want %d", got, want)
	}
}

// TestCloseWithPeekView: a view held across Close stays valid, and Consume
// consumes it, publishes, and then frees the ring.
func TestCloseWithPeekView(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 64, Pattern: true})
	before := bpftest.OpenResources(t)
	r := newTestReader(t, m)
	produce(t, p, 1)
	rec, err := r.Peek()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if !bpftest.StillMapped(t, before) {
		t.Fatal("Close unmapped the ring under a held view")
	}
	if _, err := progs.CheckRecord(rec.RawSample, 64, true); err != nil {
		t.Fatalf("view changed after Close: %v", err)
	}
	if err := r.Consume(); err != nil {
		t.Fatalf("Consume after Close: %v", err)
	}
	if bpftest.StillMapped(t, before) {
		t.Fatal("mapping not released by Consume")
	}
	if got, want := kernelConsumer(t, m), uint64(72); got != want {
		t.Fatalf("consumer position %d published by Consume after Close, want %d", got, want)
	}
	if err := r.Consume(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Consume after Close: %v, want ErrClosed", err)
	}
}

func TestSetDeadlineWhileBlocked(t *testing.T) {
	m := newRingMap(t, 4096)
	r := newTestReader(t, m)
	go func() {
		time.Sleep(20 * time.Millisecond)
		r.SetDeadline(time.Now().Add(10 * time.Millisecond))
	}()
	bpftest.Within(t, 5*time.Second, "Read after SetDeadline", func() {
		if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read: %v", err)
		}
	})
	// A past deadline still returns what is in the ring first.
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 8})
	produce(t, p, 1)
	r.SetDeadline(time.Now().Add(-time.Second))
	if _, err := r.Read(); err != nil {
		t.Fatalf("Read with a record in the ring and a past deadline: %v", err)
	}
	r.SetDeadline(time.Time{})
	produced := make(chan error, 1)
	go func() { time.Sleep(20 * time.Millisecond); produced <- p.Run(1) }()
	bpftest.Within(t, 5*time.Second, "Read without deadline", func() {
		if _, err := r.Read(); err != nil {
			t.Errorf("Read after removing the deadline: %v", err)
		}
	})
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
}

// TestNoWakeupRecordsNotStranded: records submitted without a wake-up that
// are in the ring when a read starts are returned without blocking, and
// Flush drains those that arrive while it blocks.
func TestNoWakeupRecordsNotStranded(t *testing.T) {
	for _, iterate := range []bool{false, true} {
		name := map[bool]string{false: "Read", true: "Records"}[iterate]
		t.Run(name, func(t *testing.T) {
			m := newRingMap(t, 4096)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 8, Flags: progs.NoWakeup})
			r := newTestReader(t, m)
			produce(t, p, 3)
			got := 0
			read := func() error {
				if !iterate {
					_, err := r.Read()
					return err
				}
				for _, err := range r.Records() {
					if err != nil {
						return err
					}
					got++
				}
				return nil
			}
			if !iterate {
				bpftest.Within(t, 5*time.Second, "Read of records already in the ring", func() {
					for range 3 {
						if err := read(); err != nil {
							t.Fatal(err)
						}
						got++
					}
				})
			}
			// Now block; records arrive without a wake-up; Flush ends it.
			done := make(chan error, 1)
			go func() {
				for {
					err := read()
					if err != nil {
						done <- err
						return
					}
					got++
				}
			}()
			time.Sleep(20 * time.Millisecond)
			produce(t, p, 2)
			time.Sleep(20 * time.Millisecond)
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, ErrFlushed) {
					t.Fatalf("read ended with %v, want ErrFlushed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Flush did not end the blocked read")
			}
			if got != 5 {
				t.Fatalf("read %d records before ErrFlushed, want 5", got)
			}
			// Flush is spent: the next read blocks again until its deadline.
			r.SetDeadline(time.Now().Add(10 * time.Millisecond))
			if err := read(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read after the flush: %v", err)
			}
		})
	}
}

func TestFlushWithNoReadPending(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 8, Flags: progs.NoWakeup})
	r := newTestReader(t, m)
	produce(t, p, 2)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := r.Read(); err != nil {
			t.Fatalf("record %d after Flush: %v", i, err)
		}
	}
	if _, err := r.Read(); !errors.Is(err, ErrFlushed) {
		t.Fatalf("Read of an empty ring after Flush: %v", err)
	}
}

// TestUnclosedReaderFreed: a Reader nobody closes gives back its epoll
// descriptors and its mapping once it is garbage.
func TestUnclosedReaderFreed(t *testing.T) {
	m := newRingMap(t, 1<<20)
	before := bpftest.OpenResources(t)
	func() {
		r, err := NewReader(m)
		if err != nil {
			t.Fatal(err)
		}
		bpftest.CheckOpened(t, before, "a new Reader")
		runtime.KeepAlive(r)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		now := bpftest.OpenResources(t)
		if now.FDs <= before.FDs && now.Mappings <= before.Mappings {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the Reader became garbage: %+v, before %+v", now, before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRecordsOfDroppedReader: a loop over the iterator of a Reader the
// caller no longer holds keeps the ring mapped, collections or not: the
// cleanup that frees an unclosed Reader waits for the engine the iterator
// holds. In a child process, since a ring unmapped under the loop faults.
func TestRecordsOfDroppedReader(t *testing.T) {
	bpftest.InChild(t, time.Minute, func(t *testing.T) {
		m := newRingMap(t, 4096)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 200, Pattern: true})
		r, err := NewReader(m)
		if err != nil {
			t.Fatal(err)
		}
		records := r.Records()
		r = nil
		produce(t, p, 5)
		n := 0
		for rec, err := range records {
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.GC()
			if _, err := progs.CheckRecord(rec.RawSample, 200, true); err != nil {
				t.Fatalf("record %d after a collection: %v", n, err)
			}
			if n++; n == 5 {
				break
			}
		}
	})
}
