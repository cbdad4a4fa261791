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
	"github.com/ebpf-zc/ebpf/internal/seqcheck"
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

// burstyPause is keepProducing's pause for the stress tests: mostly none,
// so the ring runs full, but now and then up to 3 ms, so it runs empty
// and readers go to sleep.
func burstyPause() time.Duration {
	if rand.IntN(4) != 0 {
		return 0
	}
	return time.Duration(rand.IntN(3000)) * time.Microsecond
}

// ledger books the records of several producers, a stream each, checks
// their contents and finds duplicates as they arrive.
type ledger struct {
	mu        sync.Mutex
	sizes     []int // each stream's record size
	trackers  []seqcheck.Tracker
	delivered uint64
	errs      []error
	// again is how many records the current reader may deliver a second
	// time: those consumed above a gap the last reader left at Close.
	again, deliveredAgain int
	// reached is, for each ring, the highest claim position of any reader
	// so far; published, the consumer positions the last reader left.
	reached, published []uint64
	// current is, for each stream, what the current reader delivered:
	// one reader never delivers a record twice, whatever the allowance.
	current []readerSeen
}

// readerSeen marks the sequence numbers one reader delivered, and the
// bitmap's words it set, so that the next reader starts clear at the
// cost of what this one read.
type readerSeen struct {
	bits    []uint64
	touched []uint64
}

// add marks seq and reports whether it was marked already.
func (r *readerSeen) add(seq uint64) (again bool) {
	word, bit := seq/64, uint64(1)<<(seq%64)
	if word >= uint64(len(r.bits)) {
		r.bits = append(r.bits, make([]uint64, word+1-uint64(len(r.bits)))...)
	}
	if r.bits[word] == 0 {
		r.touched = append(r.touched, word)
	}
	again = r.bits[word]&bit != 0
	r.bits[word] |= bit
	return again
}

func (r *readerSeen) clear() {
	for _, word := range r.touched {
		r.bits[word] = 0
	}
	r.touched = r.touched[:0]
}

func newLedger(sizes ...int) *ledger {
	return &ledger{
		sizes:    sizes,
		trackers: make([]seqcheck.Tracker, len(sizes)),
		current:  make([]readerSeen, len(sizes)),
	}
}

// deliver books sample for stream; stream -1 means the stream whose
// records have sample's size.
func (l *ledger) deliver(stream int, sample []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stream < 0 {
		stream = slices.Index(l.sizes, len(sample))
	}
	if stream < 0 || stream >= len(l.sizes) {
		l.failLocked(fmt.Errorf("a %d-byte record from stream %d: no producer makes that", len(sample), stream))
		return
	}
	seq, err := progs.CheckRecord(sample, l.sizes[stream], true)
	if err != nil {
		l.failLocked(fmt.Errorf("stream %d: %w", stream, err))
		return
	}
	switch {
	case l.current[stream].add(seq):
		l.failLocked(fmt.Errorf("stream %d: record %d delivered twice by one reader", stream, seq))
	case !l.trackers[stream].Seen(seq):
		l.trackers[stream].Add(seq)
	case l.again > 0:
		l.again--
		l.deliveredAgain++
	default:
		l.failLocked(fmt.Errorf("stream %d: record %d delivered twice", stream, seq))
	}
	l.delivered++
}

func (l *ledger) failLocked(err error) {
	if len(l.errs) < 20 {
		l.errs = append(l.errs, err)
	}
}

// producerCounts returns what each producer numbered and dropped.
func producerCounts(tb testing.TB, producers []*progs.Producer) (produced, dropped []uint64) {
	tb.Helper()
	for _, p := range producers {
		n, d, err := p.Counts()
		if err != nil {
			tb.Fatal(err)
		}
		produced, dropped = append(produced, n), append(dropped, d)
	}
	return produced, dropped
}

// complete reports whether every record the producers numbered and did
// not drop has been delivered.
func (l *ledger) complete(tb testing.TB, producers []*progs.Producer) bool {
	produced, dropped := producerCounts(tb, producers)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range producers {
		if l.trackers[i].Delivered()+dropped[i] != produced[i] {
			return false
		}
	}
	return true
}

// check fails tb for every error booked and every stream whose records
// did not all arrive exactly once.
func (l *ledger) check(tb testing.TB, producers []*progs.Producer) {
	tb.Helper()
	produced, dropped := producerCounts(tb, producers)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range l.errs {
		tb.Error(err)
	}
	for i := range producers {
		if err := l.trackers[i].Check(produced[i], dropped[i]); err != nil {
			tb.Errorf("stream %d (%d-byte records): %v", i, l.sizes[i], err)
		}
		tb.Logf("stream %d (%d-byte records): %d produced, %d delivered, %d dropped on a full ring",
			i, l.sizes[i], produced[i], l.trackers[i].Delivered(), dropped[i])
	}
	tb.Logf("%d records delivered again by a reader after a gap its predecessor left at Close", l.deliveredAgain)
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
	for i := range l.current {
		l.current[i].clear()
	}
	var again uint64
	for i, p := range positions {
		l.reached[i] = max(l.reached[i], p.End)
		again += (l.reached[i] - p.Start) / minRecord
		l.published = append(l.published, p.Start)
	}
	l.again = int(again)
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

// closedPositions returns, for a closed reader whose consumers have all
// ended, each ring's consumer position and claim position (readerClosed).
// It fails tb unless the kernel was told every record consumed.
func (e *engine) closedPositions(tb testing.TB) []claim {
	e.core.Mu.Lock()
	defer e.core.Mu.Unlock()
	positions := make([]claim, len(e.consumers))
	for i := range e.consumers {
		c := &e.consumers[i]
		if c.publishedPos != c.claims.ConsumerPos() {
			tb.Errorf("ring %d: consumer position %d published, %d consumed", i, c.publishedPos, c.claims.ConsumerPos())
		}
		positions[i] = claim{Start: c.claims.ConsumerPos(), End: c.claims.Pos()}
	}
	return positions
}

// startPositions returns each ring's consumer position, as a new reader
// found it before anything was read.
func (e *engine) startPositions() []uint64 {
	e.core.Mu.Lock()
	defer e.core.Mu.Unlock()
	starts := make([]uint64, len(e.consumers))
	for i := range e.consumers {
		starts[i] = e.consumers[i].claims.ConsumerPos()
	}
	return starts
}

// stressTarget is what Reader and MultiReader share.
type stressTarget interface {
	closedPositions(tb testing.TB) []claim
	startPositions() []uint64
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

// retry reports whether a read that ended with err may start again: after
// a break or a panic of its own, and after Flush and deadlines, yes, after a pause so that a deadline in the past
// does not make the consumer spin; after Close, no (done is true); after
// anything else, no, with err to report.
func retry(err error) (done bool, bad error) {
	switch {
	case err == nil: // a loop that broke or panicked on purpose
		return false, nil
	case errors.Is(err, ErrClosed):
		return true, nil
	case errors.Is(err, ErrFlushed), errors.Is(err, os.ErrDeadlineExceeded):
		time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
		return false, nil
	}
	return true, err
}

// records ranges over the reader, loop after loop, until it is closed.
func (s *stressReader) records() error {
	for {
		if done, bad := retry(s.loop()); done {
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
		s.ledger.deliver(s.stream(rec), rec.RawSample)
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
			s.ledger.deliver(-1, rec.RawSample)
			continue
		}
		if done, bad := retry(err); done {
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
			if done, bad := retry(err); done {
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
			s.ledger.deliver(-1, sample)
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
	s.ledger.readerOpened(t, s.rd.startPositions())
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
	receive(t, ended, 10*time.Second, "a consumer, after Close,")
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
	if err := receive(t, closed, 10*time.Second, "Close"); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// drainIdle is a stress test's end: the producers have stopped, and the
// consumers given read what is left; once everything has arrived they
// wait on the idle ring, are woken once (a deadline removed), and must
// not spin. Then the reader is closed.
func (s *stressReader) drainIdle(t *testing.T, producers []*progs.Producer, consumers []func() error, what string) {
	t.Helper()
	s.ledger.readerOpened(t, s.rd.startPositions())
	ended := make(chan error, len(consumers))
	for _, consume := range consumers {
		go func() { ended <- consume() }()
	}
	for start := time.Now(); !s.ledger.complete(t, producers); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			s.close(t)
			s.ledger.check(t, producers)
			t.Fatal("the last reader did not deliver every record left within 10 s")
		}
	}
	s.rd.SetDeadline(time.Time{}) // a wake-up for every waiter
	stillWaiting(t, ended, 100*time.Millisecond, "a consumer of the drained ring")
	checkIdleCPU(t, what)
	stillWaiting(t, ended, 0, "a consumer, while CPU was measured,")
	s.close(t)
	for range consumers {
		if err := receive(t, ended, 5*time.Second, "a consumer of the last reader, after Close,"); err != nil {
			t.Errorf("a consumer of the last reader ended with %v", err)
		}
	}
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
		if err := progs.HaveAtomicFetch(); err != nil {
			t.Skipf("producers on two CPUs need atomic sequence numbers: %v", err)
		}
		moreProcs(t)
		m := newRingMap(t, 16<<10)
		specs := []progs.RingbufSpec{
			{Ring: m, Size: 16, Method: progs.Output, Pattern: true},
			{Ring: m, Size: 48, Method: progs.Reserve, Pattern: true},
			{Ring: m, Size: 200, Method: progs.Reserve, Pattern: true},
		}
		producers := make([]*progs.Producer, len(specs))
		sizes := make([]int, len(specs))
		for i, spec := range specs {
			producers[i], sizes[i] = newProducer(t, spec), spec.Size
		}
		book := newLedger(sizes...)
		bySize := func(*Record) int { return -1 }
		consumersOf := func(s *stressReader, r *Reader) []func() error {
			return []func() error{s.records, s.records,
				func() error { return s.readInto(r) },
				func() error { return s.peekConsume(r) },
			}
		}
		before := countResources(t)

		stopProducing := bpftest.KeepProducing(t, producers, 2, burstyPause)
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
		t.Logf("%d rounds, %d records delivered", rounds, book.delivered)

		r, err := NewReader(m)
		if err != nil {
			t.Fatal(err)
		}
		s := &stressReader{rd: r, ledger: book, stream: bySize}
		s.drainIdle(t, producers, consumersOf(s, r), "two Records loops, a ReadInto and a PeekInto")
		book.check(t, producers)
		checkNoLeaks(t, before, strconv.Itoa(rounds+1)+" readers closed")
	})
}

// TestStressMulti: three rings of two sizes, a producer each on both CPUs;
// each round a MultiReader with three chaotic Records loops and chaos,
// closed at a random instant. Records are checked per ring.
func TestStressMulti(t *testing.T) {
	bpftest.InChild(t, stressDuration(t)+2*time.Minute, func(t *testing.T) {
		if err := progs.HaveAtomicFetch(); err != nil {
			t.Skipf("producers on two CPUs need atomic sequence numbers: %v", err)
		}
		moreProcs(t)
		ringSizes, recordSizes := []int{16 << 10, 32 << 10, 16 << 10}, []int{16, 40, 96}
		rings := make([]*ebpf.Map, len(ringSizes))
		producers := make([]*progs.Producer, len(ringSizes))
		for i, size := range ringSizes {
			rings[i] = newRingMap(t, size)
			producers[i] = newProducer(t, progs.RingbufSpec{Ring: rings[i], Size: recordSizes[i], Pattern: true})
		}
		book := newLedger(recordSizes...)
		byRing := func(rec *Record) int { return rec.Ring }
		before := countResources(t)

		stopProducing := bpftest.KeepProducing(t, producers, 2, burstyPause)
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
		t.Logf("%d rounds, %d records delivered", rounds, book.delivered)

		mr, err := NewMultiReader(rings...)
		if err != nil {
			t.Fatal(err)
		}
		s := &stressReader{rd: mr, ledger: book, stream: byRing}
		s.drainIdle(t, producers, []func() error{s.records, s.records}, "two MultiReader Records loops")
		book.check(t, producers)
		checkNoLeaks(t, before, strconv.Itoa(rounds+1)+" MultiReaders closed")
	})
}
