//go:build linux

package ringbuf

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// batchSeqs ranges over r.Batches until the deadline, taking at most
// perBatch samples of each batch (0: all), and returns the sequence
// numbers it saw and the error that ended the loop.
func batchSeqs(t *testing.T, r *Reader, size, perBatch int) (seqs []uint64, last error) {
	t.Helper()
	for b, err := range r.Batches() {
		if err != nil {
			last = err
			continue // the error is the last pair: the loop must end here
		}
		if b.Ring() != 0 {
			t.Fatalf("a Reader's batch from ring %d", b.Ring())
		}
		n := 0
		for sample := range b.Samples() {
			seq, err := progs.CheckRecord(sample, size, true)
			if err != nil {
				t.Fatal(err)
			}
			if cap(sample) != len(sample) {
				t.Fatalf("sample cap %d, len %d: an append would write into the ring", cap(sample), len(sample))
			}
			seqs = append(seqs, seq)
			if n++; n == perBatch {
				break
			}
		}
	}
	return seqs, last
}

// TestBatchesInOrder: every record once, in order, whether the inner loop
// reads a batch whole or breaks after each sample (the rest of the batch
// goes back and comes again in the next).
func TestBatchesInOrder(t *testing.T) {
	for _, perBatch := range []int{0, 1, 7} {
		m := newRingMap(t, 1<<16)
		p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 64, Pattern: true})
		r := newTestReader(t, m)
		produce(t, p, 100)
		r.SetDeadline(time.Now().Add(20 * time.Millisecond))
		seqs, last := batchSeqs(t, r, 64, perBatch)
		if !errors.Is(last, os.ErrDeadlineExceeded) {
			t.Fatalf("perBatch %d: loop ended with %v, want the deadline", perBatch, last)
		}
		if len(seqs) != 100 {
			t.Fatalf("perBatch %d: %d records, want 100", perBatch, len(seqs))
		}
		for i, seq := range seqs {
			if seq != uint64(i) {
				t.Fatalf("perBatch %d: record %d has seq %d", perBatch, i, seq)
			}
		}
		if got, want := r.consumers[0].ring.loadConsumer(), uint64(100*72); got != want {
			t.Fatalf("perBatch %d: kernel's consumer position %d, want %d", perBatch, got, want)
		}
	}
}

// TestBatchesBreakAndPanic: breaking the outer loop gives back the rest of
// the batch; a panic in the inner body counts the sample it was handed as
// consumed, unwinds, and publishes.
func TestBatchesBreakAndPanic(t *testing.T) {
	m := newRingMap(t, 4096)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 16, Pattern: true})
	r := newTestReader(t, m)
	produce(t, p, 10)

	for b, err := range r.Batches() {
		if err != nil {
			t.Fatal(err)
		}
		for range b.Samples() {
			break
		}
		break
	}
	if got, want := r.consumers[0].ring.loadConsumer(), uint64(24); got != want {
		t.Fatalf("kernel's consumer position %d after one sample and a break, want %d", got, want)
	}
	bpftest.PanicsWith(t, "body", "the body's", func() {
		for b, err := range r.Batches() {
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for range b.Samples() {
				if n++; n == 2 {
					panic("body")
				}
			}
		}
	})
	if got, want := r.consumers[0].ring.loadConsumer(), uint64(3*24); got != want {
		t.Fatalf("kernel's consumer position %d after a panic on the second sample, want %d", got, want)
	}
	r.SetDeadline(time.Now())
	seqs, last := batchSeqs(t, r, 16, 0)
	if !errors.Is(last, os.ErrDeadlineExceeded) || len(seqs) != 7 || seqs[0] != 3 {
		t.Fatalf("after the panic: records %v and %v, want 3..9 and the deadline", seqs, last)
	}
}

// TestBatchesConcurrent: loops over Batches and Records together share the
// records, each once, while producers run on both CPUs.
func TestBatchesConcurrent(t *testing.T) {
	m := newRingMap(t, 1<<14)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 40, Pattern: true})
	r := newTestReader(t, m)
	var (
		mu   sync.Mutex
		seen = map[uint64]int{}
		wg   sync.WaitGroup
	)
	note := func(sample []byte) {
		seq, err := progs.CheckRecord(sample, 40, true)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		seen[seq]++
		mu.Unlock()
	}
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				for b, err := range r.Batches() {
					if err != nil {
						return
					}
					for sample := range b.Samples() {
						note(sample)
					}
				}
				return
			}
			for rec, err := range r.Records() {
				if err != nil {
					return
				}
				note(rec.RawSample)
			}
		}()
	}
	bpftest.ProduceOn(t, []*progs.Producer{p}, bpftest.CPUs(t), 5000, nil)
	r.Flush()
	deadline := time.Now().Add(5 * time.Second)
	for {
		produced, dropped, err := p.Counts()
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if uint64(n)+dropped >= produced || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.Close()
	wg.Wait()
	produced, dropped, err := p.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("no record read")
	}
	for seq, n := range seen {
		if n != 1 {
			t.Errorf("record %d yielded %d times", seq, n)
		}
	}
	if got := uint64(len(seen)); got+dropped < produced {
		t.Errorf("%d records seen, %d dropped, of %d produced", got, dropped, produced)
	}
}
