//go:build linux

package perf

import (
	"errors"
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestWrapAround: records of odd sizes, written round after round into a
// one-page buffer per CPU, wrap around its end again and again; Records
// and Batches (views, and a copy for a wrapped one) and ReadInto in turns
// see every one whole and in order.
func TestWrapAround(t *testing.T) {
	page := os.Getpagesize()
	m := newEventArray(t)
	r := newTestReader(t, m, page, ReaderOptions{})
	sizes := []int{13, 77, 301, 1001}
	producers := make(map[int]int) // raw length: record size
	var order []int
	for _, size := range sizes {
		producers[rawLen(size)] = size
	}
	progsBySize := make(map[int]func(int))
	for _, size := range sizes {
		p := newProducer(t, m, size)
		progsBySize[size] = func(n int) { runOn(t, p, bpftest.CPUs(t)[0], n) }
	}
	wrapped, views := map[string]int{}, map[string]int{} // by style
	mem := r.res.mappings[0]
	lo, hi := uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&mem[0]))+uintptr(len(mem))
	for round := range 90 {
		order = order[:0]
		// Three records a round, less than a page: nothing is lost.
		for k := range 3 {
			size := sizes[(round+k)%len(sizes)]
			progsBySize[size](1)
			order = append(order, size)
		}
		r.SetDeadline(time.Now())
		got := 0
		check := func(sample []byte) {
			size, ok := producers[len(sample)]
			if !ok || got >= len(order) || size != order[got] {
				t.Fatalf("round %d: sample %d of %d bytes, want records of %v", round, got, len(sample), order)
			}
			checkSample(t, sample, size)
			got++
		}
		if style := styles[round%3]; style != "read" {
			for rec, err := range loopOf(r, style) {
				if err != nil {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						t.Fatal(err)
					}
					break
				}
				if p := uintptr(unsafe.Pointer(&rec.RawSample[0])); p >= lo && p < hi {
					views[style]++
				} else {
					wrapped[style]++
				}
				check(rec.RawSample)
			}
		} else {
			for _, rec := range drainNow(t, r) {
				check(rec.RawSample)
			}
		}
		if got != len(order) {
			t.Fatalf("round %d: %d records, want %d", round, got, len(order))
		}
	}
	for _, style := range styles[1:] {
		if wrapped[style] == 0 || views[style] == 0 {
			t.Fatalf("%s handed out %d views and %d wrapped copies: want both", style, views[style], wrapped[style])
		}
	}
	t.Logf("views %v, wrapped copies %v", views, wrapped)
}

// TestLostSamples: records that do not fit in a full buffer are counted by
// the kernel and reported as one record of lost samples, with the number
// the program saw fail, once there is room again (by Batches, as the
// batch's LostSamples).
func TestLostSamples(t *testing.T) {
	page := os.Getpagesize()
	for _, style := range styles {
		t.Run(style, func(t *testing.T) {
			m := newEventArray(t)
			r := newTestReader(t, m, page, ReaderOptions{})
			const size = 200
			p := newProducer(t, m, size)
			cpu := bpftest.CPUs(t)[0]
			fit := page / (headerSize + 4 + rawLen(size))
			runOn(t, p, cpu, fit+25)
			_, dropped, err := p.Counts()
			if err != nil || dropped != 25 {
				t.Fatalf("the program dropped %d records (%v), want 25", dropped, err)
			}
			var samples int
			var lost uint64
			read := func() {
				r.SetDeadline(time.Now())
				if style == "read" {
					for _, rec := range drainNow(t, r) {
						lost += rec.LostSamples
						if rec.LostSamples == 0 {
							samples++
						}
					}
					return
				}
				for rec, err := range loopOf(r, style) {
					if err != nil {
						break
					}
					lost += rec.LostSamples
					if rec.LostSamples == 0 {
						samples++
					}
				}
			}
			read()
			runOn(t, p, cpu, 1) // the kernel writes the lost record before it
			read()
			if samples != fit+1 || lost != 25 {
				t.Fatalf("%d samples and %d lost, want %d and 25", samples, lost, fit+1)
			}
		})
	}
}

// TestOverwritable: an overwritable buffer is read only while paused,
// newest record first, with Remaining -1; a full one gives up its oldest
// records, and each record written since the last read comes once.
func TestOverwritable(t *testing.T) {
	page := os.Getpagesize()
	for _, style := range styles {
		t.Run(style, func(t *testing.T) {
			m := newEventArray(t)
			r := newTestReader(t, m, page, ReaderOptions{Overwritable: true})
			const size = 248 // 256 bytes a record with its header and size
			p := newProducer(t, m, size)
			cpu := bpftest.CPUs(t)[0]
			read := func() (seqs []uint64) {
				r.SetDeadline(time.Now())
				if style == "read" {
					for _, rec := range drainNow(t, r) {
						if rec.Remaining != -1 {
							t.Fatalf("Remaining %d, want -1", rec.Remaining)
						}
						seqs = append(seqs, checkSample(t, rec.RawSample, size))
					}
					return seqs
				}
				for rec, err := range loopOf(r, style) {
					if err != nil {
						if !errors.Is(err, os.ErrDeadlineExceeded) {
							t.Fatal(err)
						}
						break
					}
					if rec.Remaining != -1 && style != "batches" {
						t.Fatalf("Remaining %d, want -1", rec.Remaining)
					}
					seqs = append(seqs, checkSample(t, rec.RawSample, size))
				}
				return seqs
			}
			if _, err := r.Read(); !errors.Is(err, ErrMustBePaused) {
				t.Fatalf("Read before Pause: %v, want ErrMustBePaused", err)
			}
			for _, err := range loopOf(r, style) {
				if !errors.Is(err, ErrMustBePaused) {
					t.Fatalf("%s before Pause: %v, want ErrMustBePaused", style, err)
				}
				break
			}
			fit := page / (size + 8)
			runOn(t, p, cpu, fit+3) // three more than fit: the oldest go
			if err := r.Pause(); err != nil {
				t.Fatal(err)
			}
			seqs := read()
			// The newest fit-1 whole records, at least: the oldest one in
			// the area may be cut by the wrap.
			if len(seqs) < fit-1 || len(seqs) > fit {
				t.Fatalf("read %d records, want %d or %d", len(seqs), fit-1, fit)
			}
			for i, seq := range seqs {
				if want := uint64(fit + 2 - i); seq != want {
					t.Fatalf("record %d is %d, want %d: newest first (%v)", i, seq, want, seqs)
				}
			}
			if err := r.Resume(); err != nil {
				t.Fatal(err)
			}
			runOn(t, p, cpu, 2)
			if err := r.Pause(); err != nil {
				t.Fatal(err)
			}
			if seqs := read(); len(seqs) != 2 || seqs[0] != uint64(fit+4) || seqs[1] != uint64(fit+3) {
				t.Fatalf("after two more records: %v, want [%d %d]", seqs, fit+4, fit+3)
			}
			if seqs := read(); len(seqs) != 0 {
				t.Fatalf("nothing new, read %v", seqs)
			}
		})
	}
}

// TestPauseResume: while paused, programs' writes fail and reads wait;
// after Resume records flow again; once closed, Pause and Resume return
// an error wrapping ErrClosed and programs' writes fail even though the
// caller's map is still open.
func TestPauseResume(t *testing.T) {
	m := newEventArray(t)
	r := newTestReader(t, m, 1<<16, ReaderOptions{})
	p := newProducer(t, m, 16)
	cpu := bpftest.CPUs(t)[0]
	if err := r.Resume(); err != nil { // idempotent
		t.Fatal(err)
	}
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := r.Pause(); err != nil { // idempotent
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		rec, err := r.Read()
		if err == nil {
			checkSample(t, rec.RawSample, 16)
		}
		got <- err
	}()
	runOn(t, p, cpu, 3)
	if n, dropped, _ := p.Counts(); dropped != n {
		t.Fatalf("paused: %d of %d writes dropped, want all", dropped, n)
	}
	select {
	case err := <-got:
		t.Fatalf("a paused reader returned %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	runOn(t, p, cpu, 1)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no record after Resume")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, before, _ := p.Counts()
	runOn(t, p, cpu, 1)
	if _, after, _ := p.Counts(); after != before+1 {
		t.Fatal("a program's write succeeded after Close")
	}
	for name, f := range map[string]func() error{"Pause": r.Pause, "Resume": r.Resume} {
		if err := f(); !errors.Is(err, ErrClosed) || err == ErrClosed {
			t.Errorf("%s after Close: %v, want an error wrapping ErrClosed", name, err)
		}
	}
}
