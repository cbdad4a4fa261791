//go:build linux

package ringbuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func newUserRingMap(tb testing.TB, size int) *ebpf.Map {
	tb.Helper()
	bpftest.SkipIfUnavailable(tb, progs.HaveUserRingbuf(), "user ring buffers")
	m, err := progs.NewUserRing(size)
	bpftest.SkipIfNoRingBuf(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}

func newTestWriter(tb testing.TB, m *ebpf.Map) *Writer {
	tb.Helper()
	w, err := NewWriter(m)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	return w
}

func newDrain(tb testing.TB, m *ebpf.Map, check progs.DrainCheck) *progs.UserRingDrain {
	tb.Helper()
	d, err := progs.NewUserRingDrain(m, check, 0)
	bpftest.SkipIfNoRingBuf(tb, err)
	tb.Cleanup(func() { d.Close() })
	return d
}

// drainN runs d once and fails tb unless it took want records.
func drainN(tb testing.TB, d *progs.UserRingDrain, want int) {
	tb.Helper()
	n, err := d.Drain()
	if err != nil {
		tb.Fatal(err)
	}
	if n != want {
		tb.Fatalf("drain took %d records, want %d", n, want)
	}
}

// checkSequences fails tb unless the drain took exactly perProducer[p]
// records of each producer p, in order, with no bad record.
func checkSequences(tb testing.TB, d *progs.UserRingDrain, perProducer []uint64) {
	tb.Helper()
	tot, err := d.Totals()
	if err != nil {
		tb.Fatal(err)
	}
	var want uint64
	for p, n := range perProducer {
		want += n
		next, err := d.NextSequence(uint32(p))
		if err != nil {
			tb.Fatal(err)
		}
		if next != n {
			tb.Errorf("producer %d: the kernel took records up to %d, want %d", p, next, n)
		}
	}
	if tot.Records != want || tot.Errors != 0 {
		tb.Fatalf("the kernel took %d records (%d bad), want %d, none bad", tot.Records, tot.Errors, want)
	}
}

// reserveChecked reserves a checked record of n bytes for producer p.
func reserveChecked(tb testing.TB, w *Writer, n int, p uint32, seq uint64) Reservation {
	tb.Helper()
	r, err := w.Reserve(n)
	if err != nil {
		tb.Fatal(err)
	}
	progs.CheckedRecord(r.RawSample, p, seq)
	return r
}

func TestWriterRejectsBadMaps(t *testing.T) {
	ring := newRingMap(t, 4096)
	if _, err := NewWriter(ring); err == nil || !strings.Contains(err.Error(), "is not UserRingbuf") {
		t.Fatalf("NewWriter on a RingBuf map: %v, want a map type error", err)
	}
	if _, err := NewWriter(nil); err == nil {
		t.Fatal("NewWriter(nil) succeeded")
	}
	if _, err := NewReader(newUserRingMap(t, 4096)); err == nil {
		t.Fatal("NewReader on a UserRingbuf map succeeded")
	}
}

func TestWriterRecordSizes(t *testing.T) {
	const size = 4096
	m := newUserRingMap(t, size)
	w := newTestWriter(t, m)
	d := newDrain(t, m, progs.DrainSequence)
	tooLarge := []int{-1, math.MinInt, size - headerSize + 1, size, math.MaxInt - 7, math.MaxInt}
	if u32 := uint64(math.MaxUint32); uint64(math.MaxInt) >= u32 {
		tooLarge = append(tooLarge, int(u32)) // an int holds it on 64-bit only
	}
	for _, n := range tooLarge {
		if _, err := w.Reserve(n); !errors.Is(err, ErrRecordTooLarge) {
			t.Errorf("Reserve(%d): %v, want ErrRecordTooLarge", n, err)
		}
	}
	if w.BufferSize() != size || w.AvailableBytes() != size {
		t.Fatalf("BufferSize %d, AvailableBytes %d, want both %d", w.BufferSize(), w.AvailableBytes(), size)
	}
	// The largest record fills the ring to the last byte.
	r := reserveChecked(t, w, size-headerSize, 0, 0)
	if w.AvailableBytes() != 0 {
		t.Fatalf("AvailableBytes %d with the ring full, want 0", w.AvailableBytes())
	}
	if err := w.Submit(r); err != nil {
		t.Fatal(err)
	}
	drainN(t, d, 1)
	if w.AvailableBytes() != size {
		t.Fatalf("AvailableBytes %d after the drain, want %d", w.AvailableBytes(), size)
	}
	checkSequences(t, d, []uint64{1})
}

func TestWriterOutOfOrderSubmitAndDiscard(t *testing.T) {
	m := newUserRingMap(t, 4096)
	w := newTestWriter(t, m)
	d := newDrain(t, m, progs.DrainSequence)
	a := reserveChecked(t, w, 24, 0, 0)
	b := reserveChecked(t, w, 100, 0, 1)
	dropped, err := w.Reserve(64)
	if err != nil {
		t.Fatal(err)
	}
	c := reserveChecked(t, w, 33, 0, 2)
	for _, err := range []error{w.Submit(c), w.Discard(dropped), w.Submit(b)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	drainN(t, d, 0) // a, the first, is still being written
	if err := w.Submit(a); err != nil {
		t.Fatal(err)
	}
	drainN(t, d, 3)
	checkSequences(t, d, []uint64{3})
}

// TestWriterReserveBatch: a batch takes what fits, at least one record,
// waiting only for that one; its records are submitted and discarded on
// their own, in any order, and the kernel takes them in ring order.
func TestWriterReserveBatch(t *testing.T) {
	const size, n = 4096, 100 // 112 bytes a record: 36 fit, 64 bytes spare
	m := newUserRingMap(t, size)
	w := newTestWriter(t, m)
	d := newDrain(t, m, progs.DrainSequence)
	if k, err := w.ReserveBatch(nil, n); k != 0 || err != nil {
		t.Fatalf("ReserveBatch(nil): %d, %v, want 0, nil", k, err)
	}
	var rs [40]Reservation
	if _, err := w.ReserveBatch(rs[:], size); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("ReserveBatch of %d bytes: %v, want ErrRecordTooLarge", size, err)
	}
	k, err := w.ReserveBatch(rs[:], n)
	if err != nil || k != 36 {
		t.Fatalf("ReserveBatch of 40 with room for 36: %d, %v", k, err)
	}
	if w.AvailableBytes() != 64 {
		t.Fatalf("AvailableBytes %d after the batch, want 64", w.AvailableBytes())
	}
	// The rest of the ring: one record of 40 bytes (48) fits, not two.
	var tail [2]Reservation
	if k, err := w.ReserveBatch(tail[:], 40); err != nil || k != 1 {
		t.Fatalf("ReserveBatch of 2 with room for 1: %d, %v", k, err)
	}
	w.SetDeadline(time.Now().Add(10 * time.Millisecond))
	if k, err := w.ReserveBatch(tail[1:], 40); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReserveBatch on a full ring: %d, %v, want a wait ended by the deadline", k, err)
	}
	w.SetDeadline(time.Time{})

	// Numbered in ring order, one discarded, submitted last to first.
	const dropped = 7
	var seq uint64
	for i := range 36 {
		if i != dropped {
			progs.CheckedRecord(rs[i].RawSample, 0, seq)
			seq++
		}
	}
	progs.CheckedRecord(tail[0].RawSample, 0, seq)
	if err := w.Submit(tail[0]); err != nil {
		t.Fatal(err)
	}
	for i := 35; i > 0; i-- {
		commit := w.Submit
		if i == dropped {
			commit = w.Discard
		}
		if err := commit(rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	drainN(t, d, 0) // the first is still being written
	if err := w.Submit(rs[0]); err != nil {
		t.Fatal(err)
	}
	drainN(t, d, 36)
	checkSequences(t, d, []uint64{36})
	if err := w.Submit(rs[1]); !errors.Is(err, ErrNotReserved) {
		t.Fatalf("a second Submit of a batch's record: %v, want ErrNotReserved", err)
	}
}

func TestWriterCatchesMisuse(t *testing.T) {
	const size = 4096
	m := newUserRingMap(t, size)
	w := newTestWriter(t, m)
	d := newDrain(t, m, progs.DrainSequence)
	other := newTestWriter(t, newUserRingMap(t, size))

	const length = 120 // 128 bytes with the header: 32 to a lap
	first := reserveChecked(t, w, length, 0, 0)
	if err := other.Submit(first); !errors.Is(err, ErrNotReserved) {
		t.Errorf("Submit on another Writer: %v, want ErrNotReserved", err)
	}
	if err := w.Submit(Reservation{}); !errors.Is(err, ErrNotReserved) {
		t.Errorf("Submit of the zero Reservation: %v, want ErrNotReserved", err)
	}
	if err := w.Submit(Reservation{RawSample: first.RawSample[8:], pos: first.pos}); !errors.Is(err, ErrNotReserved) {
		t.Errorf("Submit of a RawSample resliced from the front: %v, want ErrNotReserved", err)
	}
	if err := w.Submit(Reservation{RawSample: first.RawSample, pos: first.pos + 8}); !errors.Is(err, ErrNotReserved) {
		t.Errorf("Submit with a position that is not the record's: %v, want ErrNotReserved", err)
	}
	first.RawSample = first.RawSample[:16] // resliced at the end: still the record
	if err := w.Submit(first); err != nil {
		t.Fatal(err)
	}
	for _, commit := range []func(Reservation) error{w.Submit, w.Discard} {
		if err := commit(first); !errors.Is(err, ErrNotReserved) {
			t.Errorf("second commit: %v, want ErrNotReserved", err)
		}
	}
	drainN(t, d, 1)
	// A lap later a record of the same length sits where first was: the
	// stale reservation must not submit it half written.
	for seq := uint64(1); seq < size/128; seq++ {
		if err := w.Submit(reserveChecked(t, w, length, 0, seq)); err != nil {
			t.Fatal(err)
		}
		drainN(t, d, 1)
	}
	again, err := w.Reserve(length)
	if err != nil {
		t.Fatal(err)
	}
	if again.pos&uint64(size-1) != first.pos&uint64(size-1) || again.pos == first.pos {
		t.Fatalf("test set-up: new record at %d, stale one at %d: not the same offset a lap later", again.pos, first.pos)
	}
	if err := w.Submit(first); !errors.Is(err, ErrNotReserved) {
		t.Fatalf("stale reservation a lap later: %v, want ErrNotReserved", err)
	}
	drainN(t, d, 0) // the new record is still reserved
	if err := w.Discard(again); err != nil {
		t.Fatal(err)
	}
	checkSequences(t, d, []uint64{size / 128})
}

// TestWriterDelivery: producers on both CPUs, Reserve/Submit, Write and
// ReserveBatch (submitted last to first) mixed, random sizes, a ring small
// enough that they block, and drains running concurrently: the kernel takes every record once, each
// producer's in order, none half written.
func TestWriterDelivery(t *testing.T) {
	bpftest.MoreProcs(t)
	m := newUserRingMap(t, 16<<10)
	w := newTestWriter(t, m)
	d := newDrain(t, m, progs.DrainSequence)
	const producers, perProducer = 4, 20000
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for p := range producers {
		wg.Go(func() {
			if unpin, err := cpustat.Pin(p % runtime.NumCPU()); err == nil {
				defer unpin()
			}
			rng := rand.New(rand.NewPCG(uint64(p), 1))
			buf := make([]byte, 512)
			for seq, i := uint64(0), 0; seq < perProducer; i++ {
				n := progs.CheckedRecordMin + rng.IntN(400)
				switch i % 3 {
				case 0:
					r, err := w.Reserve(n)
					if err != nil {
						errs <- err
						return
					}
					progs.CheckedRecord(r.RawSample, uint32(p), seq)
					if err := w.Submit(r); err != nil {
						errs <- err
						return
					}
					seq++
				case 1:
					progs.CheckedRecord(buf[:n], uint32(p), seq)
					if _, err := w.Write(buf[:n]); err != nil {
						errs <- err
						return
					}
					seq++
				case 2: // a batch, submitted last to first
					var rs [5]Reservation
					k, err := w.ReserveBatch(rs[:min(5, perProducer-seq)], n)
					if err != nil {
						errs <- err
						return
					}
					for j, r := range rs[:k] {
						progs.CheckedRecord(r.RawSample, uint32(p), seq+uint64(j))
					}
					for j := k - 1; j >= 0; j-- {
						if err := w.Submit(rs[j]); err != nil {
							errs <- err
							return
						}
					}
					seq += uint64(k)
				}
			}
		})
	}
	done := make(chan struct{})
	drained := make(chan error, 2)
	for range 2 { // two drains: they meet as -EBUSY, which is retried
		go func() {
			for {
				_, err := d.Drain()
				if err != nil && !errors.Is(err, unix.EBUSY) {
					drained <- err
					return
				}
				select {
				case <-done:
					if w.AvailableBytes() == w.BufferSize() {
						drained <- nil
						return
					}
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	close(done)
	for range 2 {
		if err := bpftest.Receive(t, drained, 10*time.Second, "the drain"); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]uint64, producers)
	for p := range want {
		want[p] = perProducer
	}
	checkSequences(t, d, want)
}

// fillRing submits one record that fills w's ring.
func fillRing(t *testing.T, w *Writer) {
	t.Helper()
	if _, err := w.Write(make([]byte, w.BufferSize()-headerSize)); err != nil {
		t.Fatal(err)
	}
}

func TestWriterBlockedReserveWokenByDrain(t *testing.T) {
	m := newUserRingMap(t, 4096)
	w := newTestWriter(t, m)
	d := newDrain(t, m, progs.DrainSum)
	fillRing(t, w)
	ended := make(chan error, 2)
	for range 2 {
		go func() {
			r, err := w.Reserve(100)
			if err == nil {
				err = w.Submit(r)
			}
			ended <- err
		}()
	}
	bpftest.StillWaiting(t, ended, 50*time.Millisecond, "a reserve on a full ring")
	bpftest.CheckIdleCPU(t, "two reserves blocked")
	drainN(t, d, 1)
	for range 2 {
		if err := bpftest.Receive(t, ended, 5*time.Second, "a reserve after a drain"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriterEndsBlockedReserves: Close, Flush and SetDeadline, at random
// instants, end the reserves (Reserve and ReserveBatch) blocked on a full
// ring with their errors, while drains run now and then.
func TestWriterEndsBlockedReserves(t *testing.T) {
	bpftest.MoreProcs(t)
	m := newUserRingMap(t, 4096)
	before := bpftest.OpenResources(t)
	for round := range 30 {
		w, err := NewWriter(m)
		if err != nil {
			t.Fatal(err)
		}
		d := newDrain(t, m, progs.DrainSum)
		fillRing(t, w)
		const blocked = 4
		ended := make(chan error, blocked)
		for i := range blocked {
			go func() {
				var rs [2]Reservation
				for {
					// Half of them wait in Reserve, half in ReserveBatch.
					k, err := 1, error(nil)
					if i%2 == 0 {
						rs[0], err = w.Reserve(2000)
					} else {
						k, err = w.ReserveBatch(rs[:], 2000)
					}
					if err != nil {
						ended <- err
						return
					}
					for _, r := range rs[:k] {
						if err := w.Submit(r); err != nil {
							ended <- err
							return
						}
					}
				}
			}()
		}
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		var want error
		switch round % 3 {
		case 0:
			want = ErrClosed
			w.Close()
		case 1:
			want = ErrFlushed
			// A Flush ends the reserves waiting then; one that starts
			// waiting later needs another.
			go func() {
				for w.Flush() == nil {
					time.Sleep(10 * time.Millisecond)
				}
			}()
		case 2:
			want = os.ErrDeadlineExceeded
			w.SetDeadline(time.Now().Add(time.Duration(rand.IntN(1000)) * time.Microsecond))
		}
		if rand.IntN(2) == 0 {
			d.Drain() // some reserve gets space and blocks again
		}
		for range blocked {
			if err := bpftest.Receive(t, ended, 5*time.Second, "a blocked reserve"); !errors.Is(err, want) {
				t.Fatalf("round %d: blocked reserve ended with %v, want %v", round, err, want)
			}
		}
		w.Close()
		for {
			// Records of this round go, so that the next Writer starts on
			// an empty ring.
			if n, err := d.Drain(); err != nil || n == 0 {
				break
			}
		}
		d.Close()
	}
	bpftest.CheckNoLeaks(t, before, "30 writers closed with reserves blocked")
}

func TestWriterClose(t *testing.T) {
	m := newUserRingMap(t, 4096)
	d := newDrain(t, m, progs.DrainSequence)
	before := bpftest.OpenResources(t)
	w, err := NewWriter(m)
	if err != nil {
		t.Fatal(err)
	}
	submitted := reserveChecked(t, w, 40, 0, 0)
	if err := w.Submit(submitted); err != nil {
		t.Fatal(err)
	}
	outstanding := reserveChecked(t, w, 40, 0, 1)
	stale := outstanding.RawSample
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	bpftest.CheckNoLeaks(t, before, "a closed Writer")
	// Writing a stale slice after Close must not fault, nor reach the map.
	for i := range stale {
		stale[i] = 0xff
	}
	if err := w.Submit(outstanding); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
	if _, err := w.Reserve(8); !errors.Is(err, ErrClosed) {
		t.Errorf("Reserve after Close: %v, want ErrClosed", err)
	}
	if _, err := w.Write(make([]byte, 8)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
	if n := w.AvailableBytes(); n != 0 {
		t.Errorf("AvailableBytes after Close: %d, want 0", n)
	}
	// The kernel gets the submitted record and skips the discarded one.
	drainN(t, d, 1)
	checkSequences(t, d, []uint64{1})
	// A new Writer continues behind them.
	w2 := newTestWriter(t, m)
	if err := w2.Submit(reserveChecked(t, w2, 40, 0, 1)); err != nil {
		t.Fatal(err)
	}
	drainN(t, d, 1)
	checkSequences(t, d, []uint64{2})
}

// TestWriterCloseDuringWrites: Close at random instants while producers
// fill reservations byte by byte, submit and submit again, and a drain
// runs. Nothing faults (a child process hunts for it), every producer
// ends with ErrClosed, and the kernel takes exactly the records whose
// Submit succeeded, each whole.
func TestWriterCloseDuringWrites(t *testing.T) {
	bpftest.InChild(t, 2*time.Minute, func(t *testing.T) {
		bpftest.MoreProcs(t)
		m := newUserRingMap(t, 16<<10)
		for round := range 40 {
			d := newDrain(t, m, progs.DrainSequence)
			w, err := NewWriter(m)
			if err != nil {
				t.Fatal(err)
			}
			const producers = 4
			submitted := make([]uint64, producers)
			ended := make(chan error, producers)
			for p := range producers {
				go func() {
					// Odd producers reserve three records at a time.
					var rs [3]Reservation
					batch := 1 + 2*(p%2)
					for seq := uint64(0); ; {
						k, err := w.ReserveBatch(rs[:batch], progs.CheckedRecordMin+int(seq%300))
						if err != nil {
							ended <- err
							return
						}
						for _, r := range rs[:k] {
							for i := range r.RawSample {
								r.RawSample[i] = byte(i)
							}
							progs.CheckedRecord(r.RawSample, uint32(p), seq)
							seq++
						}
						for _, r := range rs[:k] {
							if err := w.Submit(r); err != nil {
								ended <- err
								return
							}
							submitted[p]++
							if err := w.Submit(r); !errors.Is(err, ErrNotReserved) && !errors.Is(err, ErrClosed) {
								ended <- fmt.Errorf("second Submit: %v, want ErrNotReserved or ErrClosed", err)
								return
							}
						}
					}
				}()
			}
			stop := make(chan struct{})
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				for {
					select {
					case <-stop:
						return
					default:
						d.Drain()
					}
				}
			}()
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			for range producers {
				if err := bpftest.Receive(t, ended, 5*time.Second, "a producer after Close"); !errors.Is(err, ErrClosed) {
					t.Fatalf("round %d: producer ended with %v, want ErrClosed", round, err)
				}
			}
			close(stop)
			<-drained
			for {
				if n, err := d.Drain(); err != nil || n == 0 {
					break
				}
			}
			checkSequences(t, d, submitted)
			d.Close()
		}
	})
}

// mapped reports whether /proc/self/maps has a mapping starting at addr.
func mapped(t *testing.T, addr uintptr) bool {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains("\n"+string(maps), fmt.Sprintf("\n%x-", addr))
}

// TestWriterCleanup: a Writer nobody closed gives back its fds and
// mappings once Go collects it, and a closed one the private memory that
// took its data area's place.
func TestWriterCleanup(t *testing.T) {
	m := newUserRingMap(t, 4096)
	before := bpftest.OpenResources(t)
	dataArea := func(closeIt bool) uintptr {
		w, err := NewWriter(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(make([]byte, 8)); err != nil {
			t.Fatal(err)
		}
		addr := uintptr(unsafe.Pointer(&w.res.mappings[0].producerArea[0]))
		if closeIt {
			w.Close()
		}
		return addr
	}
	for _, closeIt := range []bool{false, true} {
		addr := dataArea(closeIt)
		for i := 0; mapped(t, addr) || bpftest.OpenResources(t) != before; i++ {
			if i == 100 {
				t.Fatalf("closed %v: the Writer's memory at %#x or its fds outlive it", closeIt, addr)
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
	}
}

// TestWriterStaleSubmitInPayload: a Reservation submitted, drained, and
// submitted again a lap later, when its old offset lies in the payload of
// a record still reserved whose bytes there read like its busy header:
// the stale Submit is refused and changes no byte of the other record.
func TestWriterStaleSubmitInPayload(t *testing.T) {
	const size, length = 4096, 120 // 128 bytes with the header
	m := newUserRingMap(t, size)
	w := newTestWriter(t, m)
	d := newDrain(t, m, progs.DrainSum)
	stale, err := w.Reserve(length)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Submit(stale); err != nil {
		t.Fatal(err)
	}
	drainN(t, d, 1)
	// Up to 64 bytes before the end of the lap, so that the next record
	// runs over the stale one's offset, 56 bytes into its payload.
	for range (size - 128 - 64) / 128 {
		if _, err := w.Write(make([]byte, length)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(make([]byte, 64-headerSize)); err != nil {
		t.Fatal(err)
	}
	drainN(t, d, (size-128-64)/128+1)
	other, err := w.Reserve(length)
	if err != nil {
		t.Fatal(err)
	}
	if other.pos+headerSize+56 != stale.pos+size {
		t.Fatalf("test set-up: record at %d, stale one at %d: not 56 bytes into its payload", other.pos, stale.pos)
	}
	look := other.RawSample[56:64]
	binary.NativeEndian.PutUint32(look, length|busyBit)
	binary.NativeEndian.PutUint32(look[4:], uint32(stale.pos/size)) // its lap
	want := bytes.Clone(other.RawSample)
	if err := w.Submit(stale); !errors.Is(err, ErrNotReserved) {
		t.Errorf("stale Submit over another record's payload: %v, want ErrNotReserved", err)
	}
	if err := w.Discard(stale); !errors.Is(err, ErrNotReserved) {
		t.Errorf("stale Discard over another record's payload: %v, want ErrNotReserved", err)
	}
	if !bytes.Equal(other.RawSample, want) {
		t.Errorf("a stale commit changed another record's payload: % x, want % x", other.RawSample[56:64], want[56:64])
	}
	if err := w.Submit(other); err != nil {
		t.Fatal(err)
	}
	drainN(t, d, 1)
	w.Close()
	if err := w.Submit(stale); err == nil {
		t.Error("stale Submit after Close accepted")
	}
}
