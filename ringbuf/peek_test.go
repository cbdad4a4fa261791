//go:build linux

package ringbuf

import (
	"errors"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// peekSeq peeks and returns the record's sequence number.
func peekSeq(t *testing.T, r *Reader) uint64 {
	t.Helper()
	var rec Record
	if err := r.PeekInto(&rec); err != nil {
		t.Fatal(err)
	}
	seq, err := progs.CheckRecord(rec.RawSample, 16, false)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// TestConsumeCoversReadsPastTheView: a view is held while ReadInto reads
// the records after it. The kernel's consumer position stays at the view,
// and once Consume returns it covers the view and every record read past
// it: the publish the view held back is Consume's to make.
func TestConsumeCoversReadsPastTheView(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16})
	r := newTestReader(t, m)
	produce(t, p, 4)
	start := kernelConsumer(t, m)

	if seq := peekSeq(t, r); seq != 0 {
		t.Fatalf("peeked %d, want 0", seq)
	}
	for want := uint64(1); want < 3; want++ {
		rec, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if seq, _ := progs.CheckRecord(rec.RawSample, 16, false); seq != want {
			t.Fatalf("read %d past the view, want %d", seq, want)
		}
	}
	if pos := kernelConsumer(t, m); pos != start {
		t.Fatalf("consumer position %d with the view held, want %d", pos, start)
	}
	if err := r.Consume(); err != nil {
		t.Fatal(err)
	}
	if pos, want := kernelConsumer(t, m), start+3*24; pos != want {
		t.Fatalf("consumer position %d after Consume, want %d: the reads past the view are not covered", pos, want)
	}
	if seq := peekSeq(t, r); seq != 3 {
		t.Fatalf("peeked %d after Consume, want 3", seq)
	}
	if err := r.Consume(); err != nil {
		t.Fatal(err)
	}
	if err := r.Consume(); !errors.Is(err, ErrNotPeeked) {
		t.Fatalf("second Consume: %v, want ErrNotPeeked", err)
	}
}

// TestConcurrentConsume: two goroutines call Consume for one view at
// once, as the docs forbid, round after round, with Close at a random
// round. Exactly one gets nil, the other ErrNotPeeked (or ErrClosed), no
// record is skipped or peeked twice, nothing faults (a child process) or
// leaks. Not under the race detector: it reports the misuse itself, as it
// does for a bufio.Reader shared without a lock.
func TestConcurrentConsume(t *testing.T) {
	if bpftest.RaceEnabled {
		t.Skip("the race detector reports this misuse by design")
	}
	bpftest.InChild(t, time.Minute, func(t *testing.T) {
		const rounds = 2000
		m := newRingMap(t, 1<<16)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16})
		before := bpftest.OpenResources(t)
		for reader := range 4 {
			r, err := NewReader(m)
			if err != nil {
				t.Fatal(err)
			}
			produce(t, p, rounds)
			next := peekSeq(t, r)
			closeAt := -1
			if reader > 0 {
				closeAt = reader * rounds / 5
			}
			for round := range rounds {
				results := make(chan error, 2)
				start := make(chan struct{})
				for range 2 {
					go func() { <-start; results <- r.Consume() }()
				}
				close(start)
				if round == closeAt {
					if err := r.Close(); err != nil {
						t.Fatal(err)
					}
				}
				var ok, refused int
				for range 2 {
					switch err := <-results; {
					case err == nil:
						ok++
					case errors.Is(err, ErrNotPeeked), errors.Is(err, ErrClosed):
						refused++
					default:
						t.Fatalf("reader %d round %d: Consume: %v", reader, round, err)
					}
				}
				if ok != 1 || refused != 1 {
					t.Fatalf("reader %d round %d: %d Consumes succeeded, %d refused; want one each", reader, round, ok, refused)
				}
				if round == closeAt || round == rounds-1 {
					break
				}
				if seq := peekSeq(t, r); seq != next+1 {
					t.Fatalf("reader %d round %d: peeked %d after %d", reader, round, seq, next)
				}
				next++
			}
			r.Close()
			// The next reader starts after the last record consumed.
			if closeAt >= 0 {
				drain, err := NewReader(m)
				if err != nil {
					t.Fatal(err)
				}
				if seq := peekSeq(t, drain); seq != next+1 {
					t.Fatalf("reader %d: the next reader starts at %d, want %d", reader, seq, next+1)
				}
				drain.Consume()
				for drain.AvailableBytes() > 0 {
					if _, err := drain.Read(); err != nil {
						t.Fatal(err)
					}
				}
				drain.Close()
			}
		}
		bpftest.CheckNoLeaks(t, before, "readers closed while two goroutines consumed at once")
	})
}
