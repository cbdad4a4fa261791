//go:build linux

package ringbuf

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// overwriteFake is a fakeRing's data area with an overwrite-mode
// producer page: the test plays a kernel producer in overwrite mode
// (__bpf_ringbuf_reserve, Linux 6.19), in the kernel's order: overwrite
// position, busy header, producer position, then the payload and the
// commit.
type overwriteFake struct {
	*fakeRing
	words *[4]uint64 // consumer page; producer page: producer, pending, overwrite
}

func newOverwriteFake(tb testing.TB, size int) *overwriteFake {
	tb.Helper()
	if unsafe.Sizeof(uintptr(0)) == 4 {
		tb.Skip("the fake's position words are 64-bit: a 64-bit kernel's")
	}
	return &overwriteFake{fakeRing: newFakeRing(tb, size), words: new([4]uint64)}
}

// reader returns a SnapshotReader over the fake.
func (f *overwriteFake) reader(tb testing.TB) *SnapshotReader {
	tb.Helper()
	rg, err := newRing(&f.words[0], &f.words[1], unsafe.Pointer(&f.data[0]), f.size)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := newSnapshotReader(&mapping{}, rg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

func (f *overwriteFake) producerPos() uint64  { return atomic.LoadUint64(&f.words[1]) }
func (f *overwriteFake) overwritePos() uint64 { return atomic.LoadUint64(&f.words[3]) }

// reserve takes room for a record of length bytes, overwriting the oldest
// records as the kernel does, and returns its position, busy.
func (f *overwriteFake) reserve(length int) uint64 {
	pos := f.producerPos()
	end := pos + (uint64(length)+headerSize+recordAlign-1)&^(recordAlign-1)
	over := f.overwritePos()
	for end-over > f.size-1 {
		over += header(atomic.LoadUint32((*uint32)(unsafe.Pointer(&f.data[over&(f.size-1)])))).total()
	}
	atomic.StoreUint64(&f.words[3], over)
	f.writeHeader(pos, uint32(length)|busyBit)
	atomic.StoreUint64(&f.words[1], end)
	return pos
}

// write writes a committed record of payload.
func (f *overwriteFake) write(payload []byte) {
	pos := f.reserve(len(payload))
	copy(f.data[pos&(f.size-1)+headerSize:], payload)
	f.commit(pos, len(payload), false)
}

// snapshot takes one snapshot of r and returns copies of its samples.
func snapshot(tb testing.TB, r *SnapshotReader) [][]byte {
	tb.Helper()
	var samples [][]byte
	for sample, err := range r.Snapshot() {
		if err != nil {
			tb.Fatal(err)
		}
		samples = append(samples, append([]byte(nil), sample...))
	}
	return samples
}

// seqs checks records of NewOverwriteProducer's shape and returns their
// sequence numbers.
func seqs(tb testing.TB, samples [][]byte, size int) []uint64 {
	tb.Helper()
	var out []uint64
	for _, s := range samples {
		seq, err := progs.CheckOverwriteRecord(s, size)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, seq)
	}
	return out
}

// TestSnapshotFakeRing checks, without a kernel, what snapshots hand out
// as the producer fills and laps the ring: the records it holds, oldest
// first, each once, and the space of the others as lost.
func TestSnapshotFakeRing(t *testing.T) {
	const size, recordSize = 4096, 56 // 64 bytes a record: 64 fit
	const total, capacity = recordSize + headerSize, size / (recordSize + headerSize)
	for _, tc := range []struct {
		name    string
		batches []int // records written before each snapshot
	}{
		{"below capacity", []int{10, 0, 5}},
		{"full", []int{capacity - 1, 1}},
		{"lapped", []int{3 * capacity, 1, capacity + 7}},
		{"lapped between snapshots", []int{5, 2*capacity + 3, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newOverwriteFake(t, size)
			r := f.reader(t)
			var seq, handed uint64
			for _, n := range tc.batches {
				for range n {
					f.write(progs.AppendOverwriteRecord(nil, seq, recordSize))
					seq++
				}
				got := seqs(t, snapshot(t, r), recordSize)
				held := min(uint64(n), capacity-1) // the ring keeps under size bytes
				if uint64(len(got)) != held {
					t.Fatalf("after %d records: %d handed out, want the %d held", seq, len(got), held)
				}
				for i, s := range got {
					if want := seq - held + uint64(i); s != want {
						t.Fatalf("record %d of the snapshot is %d, want %d", i, s, want)
					}
				}
				handed += uint64(len(got))
				st := r.Stats()
				if st.Records != handed || st.Records+st.LostBytes/total != seq || st.LostBytes%total != 0 {
					t.Fatalf("stats %+v after %d records, %d handed out", st, seq, handed)
				}
				if c := atomic.LoadUint64(&f.words[0]); c != f.producerPos() {
					t.Fatalf("consumer position %d, want the producer's %d", c, f.producerPos())
				}
			}
		})
	}
}

// TestSnapshotFakeRingStops checks the records a snapshot leaves for the
// next: those after a busy one, after a break, and discarded ones never.
func TestSnapshotFakeRingStops(t *testing.T) {
	const recordSize = 16
	f := newOverwriteFake(t, 4096)
	r := f.reader(t)
	for seq := range uint64(3) {
		f.write(progs.AppendOverwriteRecord(nil, seq, recordSize))
	}
	discarded := f.reserve(recordSize)
	f.commit(discarded, recordSize, true)
	busy := f.reserve(recordSize)
	f.write(progs.AppendOverwriteRecord(nil, 4, recordSize))

	var got []uint64
	for sample, err := range r.Snapshot() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, seqs(t, [][]byte{sample}, recordSize)...)
		if len(got) == 2 {
			break
		}
	}
	if got = append(got, seqs(t, snapshot(t, r), recordSize)...); len(got) != 3 || got[2] != 2 {
		t.Fatalf("before the busy record: %v, want 0 1 2", got)
	}
	copy(f.data[busy&(f.size-1)+headerSize:], progs.AppendOverwriteRecord(nil, 3, recordSize))
	f.commit(busy, recordSize, false)
	if got := seqs(t, snapshot(t, r), recordSize); len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Fatalf("once committed: %v, want 3 4", got)
	}
	if st := r.Stats(); st.Records != 5 || st.LostBytes != 0 || st.Torn != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSnapshotDropsTorn overwrites records between a snapshot's copy and
// its re-check: those the producer took over are dropped and counted,
// whether the overwrite position lands inside the copy (the rest is kept)
// or past it (the copy is taken again from there).
func TestSnapshotDropsTorn(t *testing.T) {
	const size, recordSize = 4096, 56 // 64 bytes a record, 63 held at most
	for _, tc := range []struct {
		name           string
		before, during uint64 // records written before the snapshot, and during its first copy
		first, handed  uint64 // the first record handed out, and how many
		torn           uint64
		accounted      uint64 // records handed out or lost after the snapshot
	}{
		// 70 records: the overwrite position moved to record 7, which the
		// copy of records 0-19 walked over.
		{"overwrite lands in the copy", 20, 50, 7, 13, 7, 20},
		// 120 records: the overwrite position moved to record 57, past the
		// copy; the second copy takes the 63 the ring holds.
		{"overwrite passes the copy", 20, 100, 57, 63, 20, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newOverwriteFake(t, size)
			r := f.reader(t)
			var seq uint64
			write := func(n uint64) {
				for range n {
					f.write(progs.AppendOverwriteRecord(nil, seq, recordSize))
					seq++
				}
			}
			write(tc.before)
			copies := 0
			snapshotCopied = func() {
				if copies++; copies == 1 {
					write(tc.during)
				}
			}
			t.Cleanup(func() { snapshotCopied = nil })
			got := seqs(t, snapshot(t, r), recordSize)
			if uint64(len(got)) != tc.handed || got[0] != tc.first {
				t.Fatalf("handed out %v, want %d records from %d", got, tc.handed, tc.first)
			}
			st := r.Stats()
			if st.Torn != tc.torn || st.Records+st.LostBytes/(recordSize+headerSize) != tc.accounted {
				t.Fatalf("stats %+v, want %d torn, %d handed out or lost", st, tc.torn, tc.accounted)
			}
			// What the first copy missed comes next, and adds up.
			got = seqs(t, snapshot(t, r), recordSize)
			if st = r.Stats(); st.Records+st.LostBytes/(recordSize+headerSize) != seq {
				t.Fatalf("stats %+v after %d records", st, seq)
			}
			if len(got) > 0 && got[0] != tc.first+tc.handed {
				t.Fatalf("next snapshot starts at %d", got[0])
			}
		})
	}
}

// TestSnapshotAllocs checks that a snapshot allocates nothing once its
// copy has grown to what the ring holds: not per record, not per loop.
func TestSnapshotAllocs(t *testing.T) {
	if bpftest.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	f := newOverwriteFake(t, 1<<16)
	r := f.reader(t)
	record := progs.AppendOverwriteRecord(nil, 1, 56)
	fill := func() {
		for range 2 * (1 << 16) / 64 {
			f.write(record)
		}
	}
	fill()
	snapshot(t, r)
	records := 0
	allocs := testing.AllocsPerRun(20, func() {
		fill()
		for range r.Snapshot() {
			records++
		}
	})
	if allocs != 0 || records == 0 {
		t.Fatalf("%v allocations a snapshot (%d records handed out)", allocs, records)
	}
}

// TestSnapshotMisuse checks that a second loop, nested or concurrent, is
// refused, and that Close from a body ends the loop.
func TestSnapshotMisuse(t *testing.T) {
	f := newOverwriteFake(t, 4096)
	for range 3 {
		f.write(make([]byte, 8))
	}
	r := f.reader(t)
	var errs []error
	for _, err := range r.Snapshot() {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, err := range r.Snapshot() {
			if !errors.Is(err, ErrConcurrentSnapshot) {
				t.Fatalf("nested snapshot: %v, want ErrConcurrentSnapshot", err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrClosed) {
		t.Fatalf("loop closed from its body ended with %v, want ErrClosed once", errs)
	}
	for _, err := range r.Snapshot() {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("snapshot of a closed reader: %v", err)
		}
	}
	if st := r.Stats(); st.Records != 1 {
		t.Fatalf("stats %+v, want 1 record handed out", st)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// checkSnapshots takes snapshots of r until stop is closed, then one more,
// and checks every record handed out: intact (CheckOverwriteRecord), each
// CPU's numbers growing across snapshots, so none is handed out twice. It
// returns how many it saw.
func checkSnapshots(t *testing.T, r *SnapshotReader, recordSize int, stop <-chan struct{}) (records, snapshots uint64) {
	t.Helper()
	next := map[int]uint64{}
	for last := false; !last; {
		select {
		case <-stop:
			last = true
		default:
		}
		snapshots++
		for sample, err := range r.Snapshot() {
			if err != nil {
				t.Fatal(err)
			}
			seq, err := progs.CheckOverwriteRecord(sample, recordSize)
			if err != nil {
				t.Fatalf("snapshot %d: %v", snapshots, err)
			}
			cpu, n := progs.CPUOf(seq)
			if want, seen := next[cpu]; seen && n < want {
				t.Fatalf("snapshot %d: CPU %d's record %d after its record %d", snapshots, cpu, n, want-1)
			}
			next[cpu] = n + 1
			records++
		}
	}
	return records, snapshots
}

// TestSnapshotFakeRingRacingProducer takes snapshots while a Go producer
// laps a small ring, so that copies race with overwrites: no record comes
// out torn or twice, and handed out plus lost is what was written.
func TestSnapshotFakeRingRacingProducer(t *testing.T) {
	const recordSize = 120 // 128 bytes a record, 32 in the ring
	f := newOverwriteFake(t, 4096)
	r := f.reader(t)
	stop, written := make(chan struct{}), uint64(0)
	var producing sync.WaitGroup
	producing.Go(func() {
		defer close(stop)
		buf := make([]byte, 0, recordSize)
		for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); {
			for range 64 {
				f.write(progs.AppendOverwriteRecord(buf[:0], written, recordSize))
				written++
			}
		}
	})
	records, snapshots := checkSnapshots(t, r, recordSize, stop)
	producing.Wait()
	st := r.Stats()
	t.Logf("%d written, %d snapshots, stats %+v", written, snapshots, st)
	if st.Records != records || st.Records+st.LostBytes/(recordSize+headerSize) != written {
		t.Fatalf("stats %+v: %d handed out, %d written", st, records, written)
	}
}

// TestSnapshotRefuses checks that NewSnapshotReader refuses maps it cannot
// snapshot, saying why.
func TestSnapshotRefuses(t *testing.T) {
	ring := newRingMap(t, os.Getpagesize())
	array, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	bpftest.SkipIfNoRingBuf(t, err)
	t.Cleanup(func() { array.Close() })
	for _, tc := range []struct {
		name string
		m    *ebpf.Map
		want error
	}{
		{"normal ring", ring, ebpf.ErrNotSupported},
		{"array", array, nil},
		{"nil", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewSnapshotReader(tc.m)
			if err == nil {
				r.Close()
				t.Fatal("accepted")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %q does not wrap %v", err, tc.want)
			}
			t.Log(err)
		})
	}
}

// newSnapshotRing creates an overwrite-mode ring, or skips naming the
// kernel where there is none (before Linux 6.19).
func newSnapshotRing(tb testing.TB, size int) *ebpf.Map {
	tb.Helper()
	m, err := progs.NewOverwriteRing(size)
	bpftest.SkipIfNoRingBuf(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}

// TestSnapshotKernel runs the overwrite producer on each CPU the test may
// use (two at most) into a small overwrite-mode ring while snapshots are
// taken: every record is intact, each CPU's in the order it produced them,
// none twice, and once the producers stopped, handed out plus lost is
// what they committed. Order means per CPU: a CPU's records are reserved in
// the order it numbers them, the ring's order across CPUs is the order
// of their reservations, which the numbers do not record.
func TestSnapshotKernel(t *testing.T) {
	const recordSize = 56
	ring := newSnapshotRing(t, os.Getpagesize())
	p, err := progs.NewOverwriteProducer(ring, recordSize)
	bpftest.SkipIfNoRingBuf(t, err)
	t.Cleanup(func() { p.Close() })
	r, err := NewSnapshotReader(ring)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })

	stop := make(chan struct{})
	producersDone := bpftest.KeepProducing(t, []*progs.Producer{p}, bpftest.CPUs(t), nil)
	go func() {
		time.Sleep(300 * time.Millisecond)
		producersDone()
		close(stop)
	}()
	records, snapshots := checkSnapshots(t, r, recordSize, stop)
	produced, dropped, err := p.Counts()
	if err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	t.Logf("%d produced on CPUs %v, %d snapshots, stats %+v", produced, bpftest.CPUs(t), snapshots, st)
	// Even an overwrite-mode ring refuses a reservation whose space holds
	// a record another CPU is still writing (the kernel never overwrites a
	// busy record): with two producers some fail, and were never in the
	// ring. With one there is never a busy record to meet.
	if dropped != 0 && len(bpftest.CPUs(t)) == 1 {
		t.Errorf("%d reservations failed with one producer", dropped)
	}
	committed := produced - dropped
	if st.Records != records || st.LostBytes%(recordSize+headerSize) != 0 ||
		st.Records+st.LostBytes/(recordSize+headerSize) != committed {
		t.Fatalf("stats %+v: %d handed out, %d committed (%d produced, %d refused)", st, records, committed, produced, dropped)
	}
}

// TestSnapshotKernelPositions checks the ABI in ring.go against the
// kernel: after records of one size lapped the ring, the word two
// positions past producer_pos is the overwrite position, as many records
// behind the producer position as the ring holds.
func TestSnapshotKernelPositions(t *testing.T) {
	const recordSize, runs = 56, 200
	size := os.Getpagesize()
	ring := newSnapshotRing(t, size)
	p, err := progs.NewOverwriteProducer(ring, recordSize)
	bpftest.SkipIfNoRingBuf(t, err)
	t.Cleanup(func() { p.Close() })
	if err := p.RunExactly(runs); err != nil {
		t.Fatal(err)
	}
	r, err := NewSnapshotReader(ring)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	const total = recordSize + headerSize
	held := uint64(size-1) / total
	producer, overwrite := r.ring.producerPos.load(0), r.overwritePos.load(0)
	if producer != runs*total || overwrite != producer-held*total {
		t.Fatalf("producer position %d, overwrite position %d; want %d and %d", producer, overwrite, runs*total, producer-held*total)
	}
	if got := uint64(len(snapshot(t, r))); got != held {
		t.Fatalf("%d records handed out, want the %d held", got, held)
	}
	if st := r.Stats(); st.LostBytes != overwrite {
		t.Fatalf("stats %+v, want %d bytes lost", st, overwrite)
	}
}

// TestSnapshotCloseAnyInstant closes readers at random instants while two
// goroutines take snapshots and producers run on every CPU: every loop
// ends with ErrClosed (or ErrConcurrentSnapshot, beside the other
// loop), every record handed out is intact, and the closed readers leave
// no mapping and no descriptor behind.
func TestSnapshotCloseAnyInstant(t *testing.T) {
	const recordSize, trials = 56, 30
	ring := newSnapshotRing(t, os.Getpagesize())
	p, err := progs.NewOverwriteProducer(ring, recordSize)
	bpftest.SkipIfNoRingBuf(t, err)
	t.Cleanup(func() { p.Close() })
	stop := bpftest.KeepProducing(t, []*progs.Producer{p}, bpftest.CPUs(t), nil)
	defer stop()
	before := bpftest.OpenResources(t)
	for trial := range trials {
		r, err := NewSnapshotReader(ring)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for {
					for sample, err := range r.Snapshot() {
						switch {
						case errors.Is(err, ErrClosed):
							return
						case errors.Is(err, ErrConcurrentSnapshot):
						case err != nil:
							t.Error(err)
							return
						default:
							if _, err := progs.CheckOverwriteRecord(sample, recordSize); err != nil {
								t.Errorf("trial %d: %v", trial, err)
							}
						}
					}
				}
			})
		}
		time.Sleep(time.Duration(trial%7) * 300 * time.Microsecond)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	bpftest.CheckNoLeaks(t, before, "closed snapshot readers")
}
