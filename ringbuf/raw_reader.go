package ringbuf

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// RawReader reads a ring buffer in place for one goroutine at a time: the
// API of cilium/ebpf main's RawReader. Samples are views of the ring
// handed out inside a lease ([RawReader.WithLease]), valid until the
// lease commits them or ends. A second goroutine calling WithLease while
// a lease runs gets an error, and so does a Lease used after its
// WithLease returned. Close, Flush and SetDeadline may be called from any
// goroutine at any time, Close also from inside a lease. Use [Reader] to
// read from several goroutines.
type RawReader struct {
	rings *rings
	// leaseID is odd while a lease runs, and then names the one Lease
	// that may be used.
	leaseID     atomic.Uint64
	*leaseState // behind a pointer, so that RawReader stays comparable, as upstream's
}

// leaseState is what the lease's goroutine owns.
type leaseState struct {
	c        *consumer
	held     []claim // claims of the samples read since the last commit
	pos      uint64  // the next record, up to end
	end      uint64  // the end of the last held claim; pos if none is held
	area     dataArea
	producer position
	session  readers.Session
	inUse    bool // the last sample had records after it: its view may be in use
	cut      bool // the walk stopped at a record that does not fit its claim
}

// errConcurrent is returned by WithLease while a lease runs, and by a
// Lease used after its WithLease returned; nothing is read or committed.
var errConcurrent = errors.New("concurrent use of RawReader")

// NewRawReader creates a RawReader for a ring buffer map, starting at the
// consumer position the map holds.
func NewRawReader(m *ebpf.Map) (*RawReader, error) {
	rs := &rings{}
	if err := rs.open([]*ebpf.Map{m}, nil); err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	return &RawReader{rings: rs, leaseState: &leaseState{c: &rs.consumers[0]}}, nil
}

// WithLease calls fn with a [Lease], valid until fn returns: fn reads
// samples with [Lease.ReadSample] and commits them with [Lease.Commit]
// when it likes; what it read is committed when it returns, or panics.
// WithLease returns fn's error, ErrClosed once closed, or an error if a
// lease runs already (in another goroutine, or around this call).
func (rr *RawReader) WithLease(fn func(Lease) error) error {
	id := rr.leaseID.Load()
	if id%2 == 1 || !rr.leaseID.CompareAndSwap(id, id+1) {
		return fmt.Errorf("ringbuf: %w: a lease is running", errConcurrent)
	}
	id++
	defer rr.leaseID.Add(1) // last: the next lease finds this one ended
	rr.session = readers.Session{}
	if err := rr.rings.engine.Begin(&rr.session); err != nil {
		return fmt.Errorf("ringbuf: %w", err)
	}
	defer rr.rings.engine.End(&rr.session, rr.holder())
	return fn(Lease{rr: rr, id: id})
}

// leaseHolder is a lease as a readers.Holder, a type of its own so that
// its methods are not the RawReader's.
type leaseHolder leaseState

func (rr *RawReader) holder() *leaseHolder { return (*leaseHolder)(rr.leaseState) }

func (ls *leaseHolder) Claim(int, bool) (readers.Take, error) {
	c := ls.c
	if ls.cut && c.err == nil {
		c.err = c.ring.corrupt(ls.pos, ls.end, c.ring.headerAt(ls.pos))
	}
	ls.cut = false
	if c.err != nil {
		return readers.None, c.err
	}
	cl, ok, _ := c.claimBatch(true)
	if !ok {
		return readers.None, c.err
	}
	if len(ls.held) == 0 {
		ls.pos = cl.Start
	}
	ls.held = append(ls.held, cl)
	ls.end, ls.area, ls.producer = cl.End, c.ring.dataArea, c.ring.producerPos
	return readers.Held, nil
}

// Release commits before a wait only if the last sample's view is not in
// use (see ReadSample).
func (ls *leaseHolder) Release(final bool) (i, ended int, stalled bool) {
	if !final && ls.inUse {
		return 0, 0, false
	}
	return 0, (*leaseState)(ls).commitLocked(), false
}

func (ls *leaseState) commitLocked() int {
	for i, cl := range ls.held {
		upTo := cl.End
		if i == len(ls.held)-1 {
			upTo = ls.pos // the rest goes back, to be claimed again
		}
		ls.c.claims.Release(cl, upTo)
	}
	n := len(ls.held)
	ls.held, ls.end, ls.inUse = ls.held[:0], ls.pos, false
	return n
}

// Lease is a RawReader's lease, valid inside its WithLease call.
type Lease struct {
	rr *RawReader
	id uint64
}

// enter checks that the Lease's WithLease is running. Two goroutines using
// one Lease at once is a data race, as with upstream's: a check for it
// would cost every call (upstream main's BenchmarkRawReader, commit 1cedcf3).
func (s Lease) enter() error {
	if rr := s.rr; rr == nil || rr.leaseID.Load() != s.id {
		return errLeaseOutside
	}
	return nil
}

// errLeaseOutside is made once, so that enter inlines into every call.
var errLeaseOutside = fmt.Errorf("ringbuf: %w: Lease used outside its WithLease", errConcurrent)

// ReadSample returns the next sample, a read-only view of the ring with
// its capacity its length, and remain, the bytes at least left after it;
// discarded samples are skipped. The view is valid until [Lease.Commit] or
// the end of the lease, as in cilium/ebpf main, but for one exception: the
// kernel wakes only a reader that consumed everything, so a ReadSample
// that finds the ring empty after a sample with remain 0 commits before
// it waits (after one with remain > 0 it waits keeping the views).
//
// ReadSample blocks as [Reader.Read] and commits before it returns an
// error: os.ErrDeadlineExceeded, ErrFlushed once the ring is empty,
// ErrClosed after the samples the lease had claimed, or [ErrCorrupt].
func (s Lease) ReadSample() (data []byte, remain int, err error) {
	if err := s.enter(); err != nil {
		return nil, 0, err
	}
	rr := s.rr
	for {
		busy := false // below end the records are claimed: no lock
		for rr.pos < rr.end {
			h := rr.area.headerAt(rr.pos)
			total := h.total()
			if busy = h.busy(); busy || total > rr.end-rr.pos {
				break // being written, or corrupt: more below
			}
			pos := rr.pos
			rr.pos += total
			if !h.discarded() {
				// remain 0: the next ReadSample may wait, and so commit.
				remain := max(int64(rr.producer.load(rr.pos)-rr.pos), 0)
				rr.inUse = remain > 0
				return rr.area.sample(pos, h.length()), int(remain), nil
			}
		}
		if busy { // not submitted yet: back off keeping the views
			err = rr.rings.engine.BackOff(&rr.session, rr.holder())
		} else {
			rr.cut = rr.pos < rr.end
			err = rr.rings.engine.Next(&rr.session, rr.holder(), true)
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

// Commit commits the samples read so far: their views end, and the kernel
// may reuse their space. On a Lease whose WithLease returned it does
// nothing: all was committed then.
func (s Lease) Commit() {
	if s.enter() != nil {
		return
	}
	s.rr.rings.engine.Release(0, s.rr.commitLocked)
}

// BufferSize returns the size of the ring's data area in bytes.
func (rr *RawReader) BufferSize() int { return int(rr.c.ring.size) }

// AvailableBytes returns how many bytes of the ring the kernel has not
// had back: samples not read, or not committed; 0 once closed.
func (rr *RawReader) AvailableBytes() int { return rr.rings.available(0) }

// Positions is [Reader.Positions].
func (rr *RawReader) Positions() (RingPositions, error) { return rr.rings.positions(0) }

// SetDeadline is [Reader.SetDeadline] for ReadSample.
func (rr *RawReader) SetDeadline(t time.Time) { rr.rings.engine.SetDeadline(t) }

// Flush is [Reader.Flush]: a waiting ReadSample, or with none the next to
// find the ring empty, returns ErrFlushed once the ring is empty.
func (rr *RawReader) Flush() error { return rr.rings.engine.Flush() }

// Close is [Reader.Close]: a waiting ReadSample has returned ErrClosed
// when Close returns, and WithLease returns it from then on. A running
// lease reads the samples it had claimed and not given back (a Commit
// gives back what it had not read), then ErrClosed; the ring is unmapped
// once the lease holds nothing.
func (rr *RawReader) Close() error { return rr.rings.engine.Close(nil) }
