//go:build linux

package ringbuf

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

// The stress tests: producers on both CPUs, and at the same time every
// read style, loops that break, panic and dawdle at random, deadlines and
// Flush at random, and Close at a random instant, round after round, each
// round with a fresh reader on the same rings. They check that every
// record is delivered exactly once, that nothing faults (they run in a
// child process), that no mapping or descriptor is left, and that the
// waiters of an idle ring do not spin.

// stressDuration is how long the rounds of a stress test last:
// $RINGBUF_STRESS (a duration such as 30s), 3 s if unset.
func stressDuration(tb testing.TB) time.Duration {
	s := os.Getenv("RINGBUF_STRESS")
	if s == "" {
		return 3 * time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		tb.Fatalf("RINGBUF_STRESS=%q: %v", s, err)
	}
	return d
}

// burstyPause is bpftest.KeepProducing's pause for the stress tests: mostly none,
// so the ring runs full, but now and then up to 3 ms, so it runs empty
// and readers go to sleep.
func burstyPause() time.Duration {
	if rand.IntN(4) != 0 {
		return 0
	}
	return time.Duration(rand.IntN(3000)) * time.Microsecond
}

// ledger is the stress tests' bpftest.Ledger, a stream per producer,
// with where each reader left the rings: a reader may deliver again what
// its predecessor consumed above the position the kernel was told.
type ledger struct {
	*bpftest.Ledger
	mu sync.Mutex
	// reached is, for each ring, the highest claim position of any reader
	// so far; published, the consumer positions the last reader left.
	reached, published []uint64
}

// readerClosed books where a closed reader left each ring (Start: the
// consumer position it published, End: its claim position) and sets how
// many records the next reader may deliver again: those handed out above
// the consumer position, in records of at least minRecord bytes. A range
// handed back and not read again, or a view held, at Close sits below
// them, and the kernel's one position cannot skip it. Above the highest
// position any reader reached, not only the last: a reader closed before
// it read all its predecessor's gap again leaves the rest to the next.
func (l *ledger) readerClosed(positions []claim, minRecord uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reached == nil {
		l.reached = make([]uint64, len(positions))
	}
	l.published = l.published[:0]
	var again uint64
	for i, p := range positions {
		l.reached[i] = max(l.reached[i], p.End)
		again += (l.reached[i] - p.Start) / minRecord
		l.published = append(l.published, p.Start)
	}
	l.Ledger.ReaderClosed(int(again))
}

// readerOpened fails tb unless a new reader starts where the kernel was
// left by the last one's Close.
func (l *ledger) readerOpened(tb testing.TB, starts []uint64) {
	tb.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.published != nil && !slices.Equal(starts, l.published) {
		tb.Errorf("a reader starts at consumer positions %v; its predecessor published %v", starts, l.published)
	}
}

// closedPositions returns, for a closed reader whose loops and reads have
// all ended, each ring's consumer position and claim position
// (readerClosed). It fails tb unless the kernel was told every record
// consumed. Nothing else reads or writes a closed, freed reader's claims:
// it reads them without the lock.
func (rs *rings) closedPositions(tb testing.TB) []claim {
	positions := make([]claim, len(rs.consumers))
	for i := range rs.consumers {
		c := &rs.consumers[i]
		if c.publishedPos != c.claims.ConsumerPos() {
			tb.Errorf("ring %d: consumer position %d published, %d consumed", i, c.publishedPos, c.claims.ConsumerPos())
		}
		positions[i] = claim{Start: c.claims.ConsumerPos(), End: c.claims.Pos()}
	}
	return positions
}

// startPositions returns each ring's consumer position, as the kernel
// holds it for a new reader that read nothing yet.
func (rs *rings) startPositions(tb testing.TB) []uint64 {
	starts := make([]uint64, len(rs.consumers))
	for i := range rs.consumers {
		p, err := rs.positions(i)
		if err != nil {
			tb.Fatal(err)
		}
		starts[i] = p.Consumer
	}
	return starts
}

// ringsTarget is a RawReader's rings as a stressTarget, for the loops
// that read beside its leases.
type ringsTarget struct{ *rings }

func (t ringsTarget) Records() iter.Seq2[*Record, error] { return t.records }
func (t ringsTarget) SetDeadline(d time.Time)            { t.engine.SetDeadline(d) }
func (t ringsTarget) Flush() error                       { return t.engine.Flush() }
func (t ringsTarget) Close() error                       { return t.engine.Close(nil) }

// stressTarget is what Reader and MultiReader share.
type stressTarget interface {
	closedPositions(tb testing.TB) []claim
	startPositions(tb testing.TB) []uint64
	Records() iter.Seq2[*Record, error]
	SetDeadline(time.Time)
	Flush() error
	Close() error
}

// stressPanic is what a loop body panics with, on purpose.
type stressPanic struct{}

// stressReader is one reader of a stress test and its consumers, which
// read until it is closed.
type stressReader struct {
	rd      stressTarget
	ledger  *ledger
	stream  func(rec *Record) int // the ledger stream of a record
	chaotic bool                  // loops break, panic and dawdle at random
	// closeNow, when set, asks the next loop body to run to close rd.
	closeNow atomic.Bool
}

// records ranges over the reader, loop after loop, until it is closed.
func (s *stressReader) records() error {
	for {
		if done, bad := bpftest.Retry(s.loop(), ErrFlushed, time.Millisecond); done {
			return bad
		}
	}
}

// loop is one Records loop; it returns nil if its body broke or panicked.
func (s *stressReader) loop() (err error) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stressPanic); !ok {
				panic(v)
			}
			err = nil
		}
	}()
	for rec, err := range s.rd.Records() {
		if err != nil {
			return err
		}
		s.ledger.Deliver(s.stream(rec), rec.RawSample)
		if s.closeNow.CompareAndSwap(true, false) {
			if err := s.rd.Close(); err != nil {
				return fmt.Errorf("Close from a loop body: %w", err)
			}
		}
		if !s.chaotic {
			continue
		}
		switch n := rand.IntN(200); {
		case n < 4:
			return nil // break
		case n < 5:
			panic(stressPanic{})
		case n < 8:
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		}
	}
	return errors.New("Records loop ended without an error")
}

// readInto reads with ReadInto until the reader is closed.
func (s *stressReader) readInto(r *Reader) error {
	var rec Record
	for {
		err := r.ReadInto(&rec)
		if err == nil {
			s.ledger.Deliver(-1, rec.RawSample)
			continue
		}
		if done, bad := bpftest.Retry(err, ErrFlushed, time.Millisecond); done {
			return bad
		}
	}
}

// peekConsume peeks and consumes until the reader is closed. A record
// counts as delivered once Consume succeeds: one whose Consume Close
// refused stays in the ring for the next reader.
func (s *stressReader) peekConsume(r *Reader) error {
	var (
		rec    Record
		sample []byte
	)
	for {
		if err := r.PeekInto(&rec); err != nil {
			if done, bad := bpftest.Retry(err, ErrFlushed, time.Millisecond); done {
				return bad
			}
			continue
		}
		sample = append(sample[:0], rec.RawSample...)
		if s.chaotic && rand.IntN(50) == 0 {
			time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond) // hold the view
		}
		switch err := r.Consume(); {
		case err == nil:
			s.ledger.Deliver(-1, sample)
		case errors.Is(err, ErrClosed):
			return nil
		default:
			return fmt.Errorf("Consume after PeekInto: %w", err)
		}
	}
}

// chaos sets deadlines (past, near, none) and flushes at random instants
// until stop is closed.
func (s *stressReader) chaos(stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		case <-time.After(time.Duration(rand.IntN(3000)) * time.Microsecond):
		}
		switch rand.IntN(6) {
		case 0:
			s.rd.SetDeadline(time.Now().Add(-time.Millisecond))
		case 1:
			s.rd.SetDeadline(time.Now().Add(time.Duration(rand.IntN(5000)) * time.Microsecond))
		case 2, 3:
			s.rd.SetDeadline(time.Time{})
		default:
			if err := s.rd.Flush(); err != nil && !errors.Is(err, ErrClosed) {
				return fmt.Errorf("Flush: %w", err)
			}
		}
	}
}

// run starts the consumers, and the chaos if chaotic, and closes the
// reader after lifetime: from a loop body in one round out of three, else
// from here. It fails tb if a consumer does not end after Close or ends
// with an error the contract does not allow.
func (s *stressReader) run(t *testing.T, consumers []func() error, lifetime time.Duration) {
	t.Helper()
	s.ledger.readerOpened(t, s.rd.startPositions(t))
	var (
		running sync.WaitGroup
		mu      sync.Mutex
		errs    []error
	)
	stopChaos := make(chan struct{})
	if s.chaotic {
		consumers = append(consumers, func() error { return s.chaos(stopChaos) })
	}
	for _, consume := range consumers {
		running.Add(1)
		go func() {
			defer running.Done()
			if err := consume(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(lifetime)
	if rand.IntN(3) == 0 {
		s.closeNow.Store(true)
		time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
	}
	s.close(t)
	close(stopChaos)
	ended := make(chan struct{})
	go func() { running.Wait(); close(ended) }()
	bpftest.Receive(t, ended, 10*time.Second, "a consumer, after Close,")
	for _, err := range errs {
		t.Errorf("a consumer ended with %v", err)
	}
	// Records are 16 bytes at the least, 24 with the header.
	s.ledger.readerClosed(s.rd.closedPositions(t), 24)
}

// close closes the reader, and fails t if Close blocks for 10 s.
func (s *stressReader) close(t *testing.T) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- s.rd.Close() }()
	if err := bpftest.Receive(t, closed, 10*time.Second, "Close"); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// drainIdle is a stress test's end: the producers have stopped, and the
// consumers given read what is left; once everything has arrived they
// wait on the idle ring, are woken once (a deadline removed), and must
// not spin. Then the reader is closed.
func (s *stressReader) drainIdle(t *testing.T, consumers []func() error, what string) {
	t.Helper()
	s.ledger.readerOpened(t, s.rd.startPositions(t))
	ended := make(chan error, len(consumers))
	for _, consume := range consumers {
		go func() { ended <- consume() }()
	}
	for start := time.Now(); !s.ledger.Complete(t); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			s.close(t)
			s.ledger.Check(t)
			t.Fatal("the last reader did not deliver every record left within 10 s")
		}
	}
	s.rd.SetDeadline(time.Time{}) // a wake-up for every waiter
	// A consumer ends with nil after Close (retry), with the error that
	// broke the contract otherwise.
	bpftest.CheckIdleWaiters(t, what, len(consumers), ended, s.rd.Close, nil)
}

// stressLifetime is how long a round's reader lives: 10 to 200 ms.
func stressLifetime() time.Duration {
	return time.Duration(10+rand.IntN(190)) * time.Millisecond
}

// TestStress: one ring, three producers of different record sizes on both
// CPUs; each round a Reader with two chaotic Records loops, a ReadInto
// loop, one Peek/Consume loop and chaos, closed at a random instant.
func TestStress(t *testing.T) {
	bpftest.InChild(t, stressDuration(t)+2*time.Minute, func(t *testing.T) {
		bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
		bpftest.MoreProcs(t)
		m := newRingMap(t, 16<<10)
		producers, shared := newProducers(t, mixedSpecs(m))
		book := &ledger{Ledger: shared}
		bySize := func(*Record) int { return -1 }
		consumersOf := func(s *stressReader, r *Reader) []func() error {
			return []func() error{s.records, s.records,
				func() error { return s.readInto(r) },
				func() error { return s.peekConsume(r) },
			}
		}
		before := bpftest.OpenResources(t)

		stopProducing := bpftest.KeepProducing(t, producers, bpftest.CPUs(t), burstyPause)
		rounds := 0
		for end := time.Now().Add(stressDuration(t)); time.Now().Before(end) && !t.Failed(); rounds++ {
			r, err := NewReader(m)
			if err != nil {
				t.Fatalf("round %d: %v", rounds, err)
			}
			s := &stressReader{rd: r, ledger: book, stream: bySize, chaotic: true}
			s.run(t, consumersOf(s, r), stressLifetime())
		}
		stopProducing()
		t.Logf("%d rounds, %d records delivered", rounds, book.Delivered())

		r, err := NewReader(m)
		if err != nil {
			t.Fatal(err)
		}
		s := &stressReader{rd: r, ledger: book, stream: bySize}
		s.drainIdle(t, consumersOf(s, r), "two Records loops, a ReadInto and a PeekInto")
		book.Check(t)
		bpftest.CheckNoLeaks(t, before, strconv.Itoa(rounds+1)+" readers closed")
	})
}

// TestStressMulti: three rings of two sizes, a producer each on both CPUs;
// each round a MultiReader with three chaotic Records loops and chaos,
// closed at a random instant. Records are checked per ring.
func TestStressMulti(t *testing.T) {
	bpftest.InChild(t, stressDuration(t)+2*time.Minute, func(t *testing.T) {
		bpftest.SkipUnlessAtomicSequences(t, progs.HaveAtomicFetch)
		bpftest.MoreProcs(t)
		ringSizes, recordSizes := []int{16 << 10, 32 << 10, 16 << 10}, []int{16, 40, 96}
		rings := make([]*ebpf.Map, len(ringSizes))
		producers := make([]*progs.Producer, len(ringSizes))
		for i, size := range ringSizes {
			rings[i] = newRingMap(t, size)
			producers[i] = newProducer(t, progs.RingbufSpec{Ring: rings[i], Size: recordSizes[i], Pattern: true})
		}
		book := &ledger{Ledger: bpftest.NewLedger(progs.CheckRecord, nil, producers, recordSizes)}
		byRing := func(rec *Record) int { return rec.Ring }
		before := bpftest.OpenResources(t)

		stopProducing := bpftest.KeepProducing(t, producers, bpftest.CPUs(t), burstyPause)
		rounds := 0
		for end := time.Now().Add(stressDuration(t)); time.Now().Before(end) && !t.Failed(); rounds++ {
			mr, err := NewMultiReader(rings...)
			if err != nil {
				t.Fatalf("round %d: %v", rounds, err)
			}
			s := &stressReader{rd: mr, ledger: book, stream: byRing, chaotic: true}
			s.run(t, []func() error{s.records, s.records, s.records}, stressLifetime())
		}
		stopProducing()
		t.Logf("%d rounds, %d records delivered", rounds, book.Delivered())

		mr, err := NewMultiReader(rings...)
		if err != nil {
			t.Fatal(err)
		}
		s := &stressReader{rd: mr, ledger: book, stream: byRing}
		s.drainIdle(t, []func() error{s.records, s.records}, "two MultiReader Records loops")
		book.Check(t)
		bpftest.CheckNoLeaks(t, before, strconv.Itoa(rounds+1)+" MultiReaders closed")
	})
}
