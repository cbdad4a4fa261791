package bpftest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// The ledger of the exactly-once tests of ringbuf and perf: producers
// number their records, readers of every style deliver them at once, and
// every record must arrive once, or be counted as dropped.

// Counted is a producer that counts the records it numbered and those it
// dropped on a full buffer, as internal/progs' producers do.
type Counted interface {
	Counts() (produced, dropped uint64, err error)
}

// RecordCheck is progs.CheckRecord: it checks a record of size bytes
// (with the pattern its producer writes, if pattern) and returns its
// sequence number. This package cannot call it itself: progs' own tests
// import this package.
type RecordCheck func(record []byte, size int, pattern bool) (seq uint64, err error)

// Ledger books the records of several streams as readers deliver them,
// and checks that each is well formed and delivered once. Its methods may
// be called from any goroutine.
type Ledger struct {
	check     RecordCheck
	sampleLen func(size int) int
	producers []Counted
	sizes     []int

	mu       sync.Mutex
	trackers []seqcheck.Tracker
	// current is, for each stream, what the current reader delivered: one
	// reader never delivers a record twice, whatever [Ledger.ReaderClosed]
	// allows.
	current   []readerSeen
	delivered uint64 // every delivery, again or not
	lost      uint64 // reported lost by the kernel
	// again is how many records the current reader may deliver a second
	// time; closed, how many readers were.
	again, deliveredAgain, closed int
	errs                          []error
}

// NewLedger returns an empty ledger of one stream per producer:
// producers[i] writes records of sizes[i] bytes with its pattern, which
// check checks. A record comes in a sample of sampleLen(size) bytes, the
// record first and padding after it (perf pads to whole words), or of
// size bytes if sampleLen is nil.
func NewLedger[P Counted](check RecordCheck, sampleLen func(size int) int, producers []P, sizes []int) *Ledger {
	if len(sizes) != len(producers) {
		panic(fmt.Sprintf("bpftest: a ledger of %d producers and %d sizes", len(producers), len(sizes)))
	}
	if sampleLen == nil {
		sampleLen = func(size int) int { return size }
	}
	l := &Ledger{
		check:     check,
		sampleLen: sampleLen,
		sizes:     sizes,
		trackers:  make([]seqcheck.Tracker, len(producers)),
		current:   make([]readerSeen, len(producers)),
	}
	for _, p := range producers {
		l.producers = append(l.producers, p)
	}
	return l
}

// Deliver checks sample as a record of stream, or (stream -1) of the
// stream whose samples have its length, and books it. It returns why the
// sample is wrong, and keeps it for [Ledger.Check]: a length no stream
// has, a bad record, or a record delivered before.
func (l *Ledger) Deliver(stream int, sample []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stream < 0 {
		for i, size := range l.sizes {
			if l.sampleLen(size) == len(sample) {
				stream = i
				break
			}
		}
		if stream < 0 {
			return l.failLocked(fmt.Errorf("a %d-byte sample: no producer makes that", len(sample)))
		}
	}
	if stream >= len(l.sizes) {
		return l.failLocked(fmt.Errorf("a sample of stream %d, of %d", stream, len(l.sizes)))
	}
	size := l.sizes[stream]
	if len(sample) != l.sampleLen(size) {
		return l.failLocked(fmt.Errorf("stream %d: a sample of %d bytes, want %d", stream, len(sample), l.sampleLen(size)))
	}
	seq, err := l.check(sample[:size], size, true)
	if err != nil {
		return l.failLocked(fmt.Errorf("stream %d: %w", stream, err))
	}
	l.delivered++
	switch {
	case l.current[stream].add(seq):
		return l.failLocked(fmt.Errorf("stream %d: record %d delivered twice by one reader", stream, seq))
	case !l.trackers[stream].Seen(seq):
		l.trackers[stream].Add(seq)
	case l.again > 0:
		l.again--
		l.deliveredAgain++
	default:
		return l.failLocked(fmt.Errorf("stream %d: record %d delivered twice", stream, seq))
	}
	return nil
}

// Fail keeps err, a wrong delivery the caller found itself, for
// [Ledger.Check].
func (l *Ledger) Fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failLocked(err)
}

// failLocked keeps err, the first 20 of them, for Check, and returns it.
func (l *Ledger) failLocked(err error) error {
	if len(l.errs) < 20 {
		l.errs = append(l.errs, err)
	}
	return err
}

// DeliverLost books n records the kernel reported lost (perf's
// LostSamples): at most as many as the producers dropped.
func (l *Ledger) DeliverLost(n uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost += n
}

// ReaderClosed starts the next reader's book: it may deliver again
// records the last one delivered, again of them at most, and no record
// twice itself. Until it is first called, every delivery is one reader's.
func (l *Ledger) ReaderClosed(again int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.current {
		l.current[i].clear()
	}
	l.again = again
	l.closed++
}

// Delivered returns how many records were delivered, counting those
// delivered again.
func (l *Ledger) Delivered() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.delivered
}

// Lost returns how many records the kernel reported lost.
func (l *Ledger) Lost() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// counts returns what each stream's producer numbered and dropped.
func (l *Ledger) counts(tb testing.TB) (produced, dropped []uint64) {
	tb.Helper()
	for _, p := range l.producers {
		n, d, err := p.Counts()
		if err != nil {
			tb.Fatal(err)
		}
		produced, dropped = append(produced, n), append(dropped, d)
	}
	return produced, dropped
}

// Complete reports whether every record the producers numbered and did
// not drop has been delivered.
func (l *Ledger) Complete(tb testing.TB) bool {
	tb.Helper()
	produced, dropped := l.counts(tb)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.producers {
		if l.trackers[i].Delivered()+dropped[i] != produced[i] {
			return false
		}
	}
	return true
}

// Check fails tb for every wrong sample delivered, for every stream whose
// records did not all arrive exactly once (or were dropped), and if the
// kernel reported more records lost than the producers dropped.
func (l *Ledger) Check(tb testing.TB) {
	tb.Helper()
	produced, dropped := l.counts(tb)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range l.errs {
		tb.Error(err)
	}
	var allDropped uint64
	for i, size := range l.sizes {
		if err := l.trackers[i].Check(produced[i], dropped[i]); err != nil {
			tb.Errorf("stream %d (%d-byte records): %v", i, size, err)
		}
		tb.Logf("stream %d (%d-byte records): %d produced, %d delivered, %d dropped on a full buffer",
			i, size, produced[i], l.trackers[i].Delivered(), dropped[i])
		allDropped += dropped[i]
	}
	if l.lost > allDropped {
		tb.Errorf("the kernel reported %d records lost, the producers dropped %d", l.lost, allDropped)
	}
	if l.closed > 0 {
		tb.Logf("%d records delivered again by a reader after a gap its predecessor left at Close", l.deliveredAgain)
	}
}

// readerSeen marks the sequence numbers one reader delivered, and the
// bitmap's words it set, so that the next reader starts clear at the cost
// of what this one read.
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

// clear unmarks everything.
func (r *readerSeen) clear() {
	for _, word := range r.touched {
		r.bits[word] = 0
	}
	r.touched = r.touched[:0]
}
