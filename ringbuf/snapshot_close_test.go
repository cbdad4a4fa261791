//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// How a round of the close tests closes its first SnapshotReader.
const (
	closeFromBody      = iota // in the body of a record picked at random
	closeFromGoroutine        // from another goroutine, after a random delay
	closeModes
)

// closedSnapshot takes snapshots of r and closes it as mode says, and
// returns the samples it handed out, copied. From the body, Close comes
// in the body of record closeAt (counted from 1); from another goroutine,
// after delay, while the body sleeps now and then so that Close may land
// at any record, or before the loop, or during its copy.
func closedSnapshot(tb testing.TB, r *SnapshotReader, mode, closeAt int, delay time.Duration, rng *rand.Rand) [][]byte {
	tb.Helper()
	var samples [][]byte
	var closing sync.WaitGroup
	if mode == closeFromGoroutine {
		closing.Go(func() {
			time.Sleep(delay)
			if err := r.Close(); err != nil {
				tb.Error(err)
			}
		})
	}
	for closed := false; !closed; {
		closedInBody := false
		for sample, err := range r.Snapshot() {
			if err != nil {
				if !errors.Is(err, ErrClosed) {
					tb.Fatalf("snapshot of a reader being closed: %v, want ErrClosed", err)
				}
				closed = true
				continue
			}
			if closedInBody {
				tb.Fatalf("a record handed out after Close in the body, %d records in", closeAt)
			}
			samples = append(samples, append([]byte(nil), sample...))
			switch {
			case mode == closeFromBody && len(samples) == closeAt:
				if err := r.Close(); err != nil {
					tb.Fatal(err)
				}
				closedInBody = true
			case mode == closeFromGoroutine && rng.IntN(4) == 0:
				time.Sleep(time.Duration(rng.IntN(20)) * time.Microsecond)
			}
		}
		// From the body, the loop ended: with ErrClosed if records were left.
		closed = closed || closedInBody
	}
	closing.Wait()
	return samples
}

// roundLedger checks what the two readers of a round handed out against
// the records the ring held, and counts across rounds.
type roundLedger struct {
	rounds, held, handedOut, byClosed, duplicates, lost uint64
}

// check compares got, the sequence numbers handed out by the closed
// reader then by the new one, with want, those the ring held, in order,
// and fails tb at the first round that differs.
func (l *roundLedger) check(tb testing.TB, round int, got, want []uint64, byClosed int) {
	tb.Helper()
	l.rounds++
	l.held += uint64(len(want))
	l.handedOut += uint64(len(got))
	l.byClosed += uint64(byClosed)
	seen := make(map[uint64]int, len(got))
	for _, seq := range got {
		if seen[seq]++; seen[seq] == 2 {
			l.duplicates++
		}
	}
	for _, seq := range want {
		if seen[seq] == 0 {
			l.lost++
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		tb.Errorf("round %d: handed out %v (%d by the closed reader), want the %d held: %v",
			round, got, byClosed, len(want), want)
	}
}

func (l *roundLedger) String() string {
	return fmt.Sprintf("%d rounds: %d records held, %d handed out (%d before Close), %d duplicates, %d lost",
		l.rounds, l.held, l.handedOut, l.byClosed, l.duplicates, l.lost)
}

// TestSnapshotCloseNeverTwiceFakeRing closes a SnapshotReader at a random
// record of a snapshot, from its body or from another goroutine, over a
// fake ring: the records it handed out and those a new reader of the ring
// hands out next are the records the ring held, each once (issue 50).
func TestSnapshotCloseNeverTwiceFakeRing(t *testing.T) {
	const size, recordSize, rounds = 4096, 56, 300
	const held = (size - 1) / (recordSize + headerSize)
	f := newOverwriteFake(t, size)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 50))
	var ledger roundLedger
	var written uint64
	for round := range rounds {
		n := 1 + rng.Uint64N(2*held) // some rounds lap the ring
		for range n {
			f.write(progs.AppendOverwriteRecord(nil, written, recordSize))
			written++
		}
		want := seqRange(written-min(n, held), written)
		mode := round % closeModes
		samples := closedSnapshot(t, f.reader(t), mode, 1+rng.IntN(len(want)), time.Duration(rng.IntN(200))*time.Microsecond, rng)
		byClosed := len(samples)
		samples = append(samples, snapshot(t, f.reader(t))...)
		ledger.check(t, round, seqs(t, samples, recordSize), want, byClosed)
		if t.Failed() {
			t.Fatalf("seed %d, close mode %d", seed, mode)
		}
	}
	t.Log(&ledger)
}

// seqRange returns the numbers from lo up to hi.
func seqRange(lo, hi uint64) []uint64 {
	out := make([]uint64, 0, hi-lo)
	for seq := lo; seq < hi; seq++ {
		out = append(out, seq)
	}
	return out
}

// TestSnapshotCloseNeverTwice is the kernel's version of
// TestSnapshotCloseNeverTwiceFakeRing: each round the overwrite producer
// writes up to two rings' worth of records on one CPU, then a
// SnapshotReader is closed at a random instant of a snapshot, from its
// body or from another goroutine, and a new SnapshotReader of the map
// takes a snapshot. Between them they hand out every record the ring
// held, in order, none twice; the producer runs between rounds only, so
// that nothing the ring held is overwritten during one. The closed
// readers leave no mapping and no descriptor behind.
func TestSnapshotCloseNeverTwice(t *testing.T) {
	const recordSize, rounds = 56, 200
	size := os.Getpagesize()
	ring := newSnapshotRing(t, size)
	p, err := progs.NewOverwriteProducer(ring, recordSize)
	bpftest.SkipIfNoRingBuf(t, err)
	t.Cleanup(func() { p.Close() })
	held := uint64(size-1) / (recordSize + headerSize)
	cpu := bpftest.CPUs(t)[0]
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 50))
	before := bpftest.OpenResources(t)
	var ledger roundLedger
	var produced uint64 // records numbered on cpu so far
	for round := range rounds {
		n := 1 + rng.Uint64N(2*held)
		produceOn(t, p, cpu, int(n))
		produced += n
		want := seqRange(produced-min(n, held), produced)
		r, err := NewSnapshotReader(ring)
		if err != nil {
			t.Fatal(err)
		}
		mode := round % closeModes
		samples := closedSnapshot(t, r, mode, 1+rng.IntN(len(want)), time.Duration(rng.IntN(3000))*time.Microsecond, rng)
		byClosed := len(samples)
		next, err := NewSnapshotReader(ring)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, snapshot(t, next)...)
		if err := next.Close(); err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, seq := range seqs(t, samples, recordSize) {
			onCPU, n := progs.CPUOf(seq)
			if onCPU != cpu {
				t.Fatalf("round %d: record %#x from CPU %d, the producer ran on %d", round, seq, onCPU, cpu)
			}
			got = append(got, n)
		}
		ledger.check(t, round, got, want, byClosed)
		if t.Failed() {
			t.Fatalf("seed %d, close mode %d", seed, mode)
		}
	}
	t.Log(&ledger)
	bpftest.CheckNoLeaks(t, before, fmt.Sprintf("%d closed snapshot readers", 2*rounds))
}

// produceOn runs p n times on cpu, and fails tb unless every run
// committed its record.
func produceOn(tb testing.TB, p *progs.Producer, cpu, n int) {
	tb.Helper()
	unpin, err := cpustat.Pin(cpu)
	if err != nil {
		tb.Fatal(err)
	}
	defer unpin()
	produce(tb, p, n)
}

// TestSnapshotClosedMap checks that NewSnapshotReader refuses a closed map
// for its descriptor, as NewReader refuses a closed normal ring, not as a
// ring of the wrong kind: a closed Map still reports its type and flags.
func TestSnapshotClosedMap(t *testing.T) {
	for _, tc := range []struct {
		name        string
		new         func(testing.TB, int) *ebpf.Map
		readerEBADF bool // NewReader's error wraps EBADF: for an overwrite-mode ring it names the flags (engine.go)
	}{
		{"normal ring", newRingMap, true},
		{"overwrite-mode ring", newSnapshotRing, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.new(t, os.Getpagesize())
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := NewSnapshotReader(m)
			if err == nil {
				r.Close()
				t.Fatal("a closed map accepted")
			}
			if !errors.Is(err, syscall.EBADF) || errors.Is(err, ebpf.ErrNotSupported) {
				t.Errorf("NewSnapshotReader of a closed map: %q, want EBADF, not ErrNotSupported", err)
			}
			if _, err := NewReader(m); tc.readerEBADF && !errors.Is(err, syscall.EBADF) {
				t.Errorf("NewReader of the same closed map: %q, not the EBADF NewSnapshotReader matches", err)
			}
		})
	}
}
