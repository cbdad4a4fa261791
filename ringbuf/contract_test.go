//go:build linux

package ringbuf

import (
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf/perf"
	upstream "github.com/cilium/ebpf/ringbuf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// readStyles consume n records of r, each the way a user would.
var readStyles = []struct {
	name    string
	consume func(t *testing.T, r *Reader, n int)
}{
	{"Read", func(t *testing.T, r *Reader, n int) {
		for range n {
			if _, err := r.Read(); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{"ReadInto", func(t *testing.T, r *Reader, n int) {
		var rec Record
		for range n {
			if err := r.ReadInto(&rec); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{"Peek+Consume", func(t *testing.T, r *Reader, n int) {
		for range n {
			if _, err := r.Peek(); err != nil {
				t.Fatal(err)
			}
			if err := r.Consume(); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{"Records break", func(t *testing.T, r *Reader, n int) {
		i := 0
		for _, err := range r.Records() {
			if err != nil {
				t.Fatal(err)
			}
			if i++; i == n {
				break
			}
		}
	}},
}

// TestConsumedSpaceReachesKernel: once a read returns, the kernel may
// reuse what it consumed. A full 16 KiB ring takes 10 more records of
// 128 B after 10 were read, whatever way they were read, with no publish
// batch held back while the reader sits idle.
func TestConsumedSpaceReachesKernel(t *testing.T) {
	for _, style := range readStyles {
		t.Run(style.name, func(t *testing.T) {
			m := newRingMap(t, 16<<10)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 128})
			r := newTestReader(t, m)
			produce(t, p, (16<<10)/(128+headerSize)) // as many as fit
			style.consume(t, r, 10)
			if got, want := r.consumers[0].ring.loadConsumer(), uint64(10*(128+headerSize)); got != want {
				t.Errorf("kernel's consumer position %d after 10 records, want %d", got, want)
			}
			produce(t, p, 10) // fails on a drop
		})
	}
}

// TestErrorsPublishFirst: when a read or loop ends with ErrFlushed or at
// its deadline, the kernel already knows everything it consumed.
func TestErrorsPublishFirst(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stop    func(r *Reader)
		wantErr error
	}{
		{"Flush", func(r *Reader) { r.Flush() }, ErrFlushed},
		{"deadline", func(r *Reader) { r.SetDeadline(time.Now()) }, os.ErrDeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newRingMap(t, 1<<20)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16})
			r := newTestReader(t, m)
			produce(t, p, 20)
			tc.stop(r)
			n := 0
			for _, err := range r.Records() {
				if err == nil {
					n++
					continue
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("loop ended with %v, want %v", err, tc.wantErr)
				}
				if got, want := r.consumers[0].ring.loadConsumer(), uint64(20*24); got != want {
					t.Fatalf("kernel's consumer position %d at %v, want %d", got, err, want)
				}
			}
			if n != 20 {
				t.Fatalf("loop yielded %d records, want 20", n)
			}
		})
	}
}

// TestRecordsBodyPanics: a panic in a loop body, on a record or on the
// error pair, unwinds like any panic; the record it held counts as
// consumed, the kernel knows it, and the reader goes on.
func TestRecordsBodyPanics(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 3)

	panicking := func(onError bool) (recovered any) {
		defer func() { recovered = recover() }()
		for _, err := range r.Records() {
			if (err != nil) == onError {
				panic("body")
			}
		}
		return nil
	}
	if got := panicking(false); got != "body" {
		t.Fatalf("recovered %v, want the body's panic", got)
	}
	if got, want := r.consumers[0].ring.loadConsumer(), uint64(24); got != want {
		t.Fatalf("kernel's consumer position %d after a panic on the first record, want %d", got, want)
	}
	r.SetDeadline(time.Now())
	if got := panicking(true); got != "body" {
		t.Fatalf("recovered %v from a panic on the error pair, want the body's", got)
	}
	if got, want := r.consumers[0].ring.loadConsumer(), uint64(3*24); got != want {
		t.Fatalf("kernel's consumer position %d, want %d", got, want)
	}
	r.SetDeadline(time.Time{})
	produce(t, p, 1)
	rec, err := r.Read()
	if err != nil {
		t.Fatalf("Read after the panics: %v", err)
	}
	if seq, err := progs.CheckRecord(rec.RawSample, 16, true); err != nil || seq != 3 {
		t.Fatalf("Read after the panics got record %d (%v), want 3", seq, err)
	}
}

// TestBusyRecordInReturnedClaim: a range a loop hands back unread holds a
// record the producer is still writing. A later Read waits for it with
// the lock free and its deadline honoured, and returns it once committed.
func TestBusyRecordInReturnedClaim(t *testing.T) {
	f := newFakeRing(t, 4096)
	r, err := f.reader(t)
	if err != nil {
		t.Fatal(err)
	}
	f.write([]byte("first"))
	busy := f.reserve([]byte("busy"))
	for range r.Records() {
		// Claim the next record past the loop's batch, so that the batch
		// cannot shrink back when the loop gives up its unread part.
		f.write([]byte("after"))
		if rec, err := r.Read(); err != nil || string(rec.RawSample) != "after" {
			t.Fatalf("Read in the body: %q, %v", rec.RawSample, err)
		}
		break
	}
	r.SetDeadline(time.Now().Add(50 * time.Millisecond))
	bpftest.Within(t, 2*time.Second, "Read behind a busy record", func() {
		if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read behind a busy record: %v, want the deadline", err)
		}
	})
	r.SetDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		rec, err := r.Read()
		if err == nil && string(rec.RawSample) != "busy" {
			err = errors.New("read " + string(rec.RawSample))
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	bpftest.Within(t, time.Second, "SetDeadline while a Read waits for a busy record", func() {
		r.SetDeadline(time.Now().Add(5 * time.Second))
	})
	f.commit(busy, 4, false)
	bpftest.Within(t, 2*time.Second, "Read of a committed record", func() {
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// TestHeldViewDoesNotStrandWaiters: while a Peek view pins the consumer
// position, the kernel wakes nobody for new records; a Read waiting in
// another goroutine still gets them, within heldClaimPoll.
func TestHeldViewDoesNotStrandWaiters(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 1)
	if _, err := r.Peek(); err != nil {
		t.Fatal(err)
	}
	r.SetDeadline(time.Now().Add(5 * time.Second))
	got := make(chan error, 1)
	go func() {
		rec, err := r.Read()
		if err == nil {
			var seq uint64
			if seq, err = progs.CheckRecord(rec.RawSample, 16, true); err == nil && seq != 1 {
				err = errors.New("read the wrong record")
			}
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the Read sleep
	produce(t, p, 1)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("a record behind a held Peek view was not read within a second")
	}
	if err := r.Consume(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseNeverRewinds: a reader closed after another consumed further
// leaves the kernel's consumer position where the other put it.
func TestCloseNeverRewinds(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16})
	produce(t, p, 5)
	first := newTestReader(t, m)
	if _, err := first.Read(); err != nil {
		t.Fatal(err)
	}
	second := newTestReader(t, m)
	for range 4 {
		if _, err := second.Read(); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := second.consumers[0].ring.loadConsumer(), uint64(5*24); got != want {
		t.Fatalf("kernel's consumer position %d after the stale reader closed, want %d", got, want)
	}

	f := newFakeRing(t, 4096)
	f.positions[0] = 720
	rg, err := newRing(&f.positions[0], &f.positions[1], nil, f.size)
	if err != nil {
		t.Fatal(err)
	}
	rg.publishConsumer(144)
	if got := atomic.LoadUint64(&f.positions[0]); got != 720 {
		t.Fatalf("publishing 144 over 720 left %d", got)
	}
}

// TestUpstreamErrorValues: code written against cilium/ebpf's ringbuf
// matches our errors after the one-line import switch.
func TestUpstreamErrorValues(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ours, want error
	}{
		{"ErrClosed", ErrClosed, upstream.ErrClosed},
		{"ErrClosed is os.ErrClosed", ErrClosed, os.ErrClosed},
		{"ErrFlushed", ErrFlushed, upstream.ErrFlushed},
		{"ErrFlushed is perf.ErrFlushed", ErrFlushed, perf.ErrFlushed},
	} {
		if ours := tc.ours; ours != tc.want || !errors.Is(ours, tc.want) {
			t.Errorf("%s: ours %v, upstream %v", tc.name, tc.ours, tc.want)
		}
	}
}
