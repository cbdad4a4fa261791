//go:build linux

package ringbuf

import (
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

func newTestMultiReader(tb testing.TB, maps ...*ebpf.Map) *MultiReader {
	tb.Helper()
	mr, err := NewMultiReader(maps...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mr.Close() })
	return mr
}

// newRingArray makes an array of maps holding one ring buffer of each
// size, ring i at key i.
func newRingArray(tb testing.TB, sizes ...int) (*ebpf.Map, []*ebpf.Map) {
	tb.Helper()
	rings := make([]*ebpf.Map, len(sizes))
	for i, size := range sizes {
		rings[i] = newRingMap(tb, size)
	}
	outer, err := ebpf.NewMap(&ebpf.MapSpec{
		Type:       ebpf.ArrayOfMaps,
		KeySize:    4,
		ValueSize:  4,
		MaxEntries: uint32(len(sizes)),
		InnerMap:   &ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(sizes[0])},
	})
	bpftest.SkipIfNoRingBuf(tb, err)
	tb.Cleanup(func() { outer.Close() })
	for i, ring := range rings {
		if err := outer.Put(uint32(i), ring); err != nil {
			tb.Fatal(err)
		}
	}
	return outer, rings
}

// TestMultiReaderExactlyOnce: three rings of different sizes, each fed
// by a producer of its own record size on both CPUs, drained by two
// Records loops that break at random: every record arrives once, from
// the ring it was written to, and both loops get records.
func TestMultiReaderExactlyOnce(t *testing.T) {
	bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
	sizes := []int{16 << 10, 32 << 10, 64 << 10}
	recordSizes := []int{16, 40, 96}
	rings := make([]*ebpf.Map, len(sizes))
	producers := make([]*progs.Producer, len(sizes))
	for i := range sizes {
		rings[i] = newRingMap(t, sizes[i])
		producers[i] = newProducer(t, progs.RingbufSpec{Ring: rings[i], Size: recordSizes[i], Pattern: true})
	}
	mr := newTestMultiReader(t, rings...)

	var (
		mu       sync.Mutex
		trackers = make([]seqcheck.Tracker, len(sizes))
		received [2]int
		errs     []error
	)
	var running sync.WaitGroup
	for id := range received {
		running.Add(1)
		go func() {
			defer running.Done()
			for {
				stop, n := 1+rand.IntN(100), 0
				for rec, err := range mr.Records() {
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					if len(rec.RawSample) != recordSizes[rec.Ring] {
						t.Errorf("ring %d yielded a %d-byte record, its producer writes %d",
							rec.Ring, len(rec.RawSample), recordSizes[rec.Ring])
						continue
					}
					seq, err := progs.CheckRecord(rec.RawSample, recordSizes[rec.Ring], true)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					trackers[rec.Ring].Add(seq)
					received[id]++
					mu.Unlock()
					if n++; n == stop {
						break
					}
				}
			}
		}()
	}
	// At least 10,000 runs per producer and CPU, and on until both loops
	// have had records: two CPUs are shared by eight goroutines.
	allServed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return received[0] > 0 && received[1] > 0
	}
	bpftest.ProduceOn(t, producers, bpftest.CPUs(t), 10_000, func() bool { return !allServed() })
	mr.SetDeadline(time.Now().Add(200 * time.Millisecond))
	bpftest.Within(t, 10*time.Second, "loops", running.Wait)
	for _, err := range errs {
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("loop ended with %v, want the deadline", err)
		}
	}
	for i, p := range producers {
		produced, dropped, err := p.Counts()
		if err != nil {
			t.Fatal(err)
		}
		if err := trackers[i].Check(produced, dropped); err != nil {
			t.Errorf("ring %d: %v", i, err)
		}
		if got, want := mr.consumers[i].ring.loadConsumer(), atomicProducer(&mr.consumers[i]); got != want {
			t.Errorf("ring %d: kernel's consumer position %d after the loops ended, producer at %d", i, got, want)
		}
	}
	for id, n := range received {
		if n == 0 {
			t.Errorf("loop %d received no records", id)
		}
	}
	t.Logf("records per loop: %v", received)
}

func atomicProducer(c *consumer) uint64 {
	p, _ := c.ring.loadProducer(c.ring.loadConsumer())
	return p
}

// TestMultiReaderFairness: a ring full of records does not keep a loop
// from another ring's records for longer than one batch (min(size/8,
// 256 KiB) and the record crossing it).
func TestMultiReaderFairness(t *testing.T) {
	busy, quiet := newRingMap(t, 1<<20), newRingMap(t, 4096)
	busyProducer := newProducer(t, progs.RingbufSpec{Ring: busy, Size: 16})
	quietProducer := newProducer(t, progs.RingbufSpec{Ring: quiet, Size: 16})
	produce(t, busyProducer, (1<<20)/24)
	produce(t, quietProducer, 10)
	mr := newTestMultiReader(t, busy, quiet)
	batch := int(mr.consumers[0].batchBytes/24) + 1 // records of the busy ring in one turn

	for turn := range 2 { // a loop may start with either ring
		seen, quietSeen := 0, 0
		for rec, err := range mr.Records() {
			if err != nil {
				t.Fatal(err)
			}
			seen++
			if rec.Ring == 1 {
				quietSeen++
			}
			if quietSeen == 10 {
				break
			}
			if seen > batch+10 {
				t.Fatalf("turn %d: %d records yielded, %d of them from the quiet ring: the busy ring starves it (bound %d)",
					turn, seen, quietSeen, batch+10)
			}
		}
		produce(t, quietProducer, 10)
	}
}

func TestMultiReaderFromMapOfMaps(t *testing.T) {
	outer, rings := newRingArray(t, 4096, 8192)
	for i, ring := range rings {
		p := newProducer(t, progs.RingbufSpec{Ring: ring, Size: 8 + 8*i})
		produce(t, p, 3)
	}
	// The reader holds the rings through their mappings: the owner may
	// close its handles.
	for _, ring := range rings {
		ring.Close()
	}
	mr, err := NewMultiReaderFromMapOfMaps(outer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	if mr.Rings() != 2 {
		t.Fatalf("%d rings, want 2", mr.Rings())
	}
	perRing := map[int]int{}
	mr.SetDeadline(time.Now())
	for rec, err := range mr.Records() {
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			break
		}
		if want := 8 + 8*rec.Ring; len(rec.RawSample) != want {
			t.Errorf("ring %d: %d-byte record, want %d", rec.Ring, len(rec.RawSample), want)
		}
		perRing[rec.Ring]++
	}
	if perRing[0] != 3 || perRing[1] != 3 {
		t.Fatalf("records per ring %v, want 3 from each", perRing)
	}
}

func TestMultiReaderBadInput(t *testing.T) {
	ring := newRingMap(t, 4096)
	array, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	bpftest.SkipIfNoRingBuf(t, err)
	t.Cleanup(func() { array.Close() })
	arrays, err := ebpf.NewMap(&ebpf.MapSpec{
		Type: ebpf.ArrayOfMaps, KeySize: 4, ValueSize: 4, MaxEntries: 2,
		InnerMap: &ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { arrays.Close() })
	if err := arrays.Put(uint32(1), array); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		open func() (*MultiReader, error)
		want string
	}{
		{"no maps", func() (*MultiReader, error) { return NewMultiReader() }, "no ring buffers"},
		{"nil map", func() (*MultiReader, error) { return NewMultiReader(ring, nil) }, "ring 1: nil map"},
		{"an array among rings", func() (*MultiReader, error) { return NewMultiReader(ring, array) }, "ring 1: map type Array"},
		{"not a map of maps", func() (*MultiReader, error) { return NewMultiReaderFromMapOfMaps(ring) }, "is not ArrayOfMaps"},
		{"a map of arrays", func() (*MultiReader, error) { return NewMultiReaderFromMapOfMaps(arrays) }, "entry 1 holds a Array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mr, err := tc.open()
			if err == nil {
				mr.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
	// Nothing was left open: the ring can still be read.
	r := newTestReader(t, ring)
	r.SetDeadline(time.Now())
	if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal(err)
	}
}

// TestMultiReaderStops: Flush, deadlines and Close end loops as they end a
// Reader's, after the records in every ring, with every ring published.
func TestMultiReaderStops(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stop    func(mr *MultiReader)
		wantErr error
	}{
		{"Flush", func(mr *MultiReader) { mr.Flush() }, ErrFlushed},
		{"deadline", func(mr *MultiReader) { mr.SetDeadline(time.Now().Add(10 * time.Millisecond)) }, os.ErrDeadlineExceeded},
		{"Close", func(mr *MultiReader) { mr.Close() }, ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newRingMap(t, 4096), newRingMap(t, 8192)
			for _, m := range []*ebpf.Map{a, b} {
				produce(t, newProducer(t, progs.RingbufSpec{Ring: m, Size: 16}), 5)
			}
			mr := newTestMultiReader(t, a, b)
			n := 0
			var last error
			bpftest.Within(t, 5*time.Second, "loop", func() {
				for _, err := range mr.Records() {
					if err != nil {
						last = err
						break
					}
					if n++; n == 10 {
						go func() {
							time.Sleep(20 * time.Millisecond) // let the loop block
							tc.stop(mr)
						}()
					}
				}
			})
			if n != 10 || !errors.Is(last, tc.wantErr) {
				t.Fatalf("%d records, then %v; want 10, then %v", n, last, tc.wantErr)
			}
			if tc.wantErr == ErrClosed {
				return // the mappings are gone
			}
			for i, r := range mr.consumers {
				if got := r.ring.loadConsumer(); got != 5*24 {
					t.Errorf("ring %d: kernel's consumer position %d, want %d", i, got, 5*24)
				}
			}
		})
	}
}
