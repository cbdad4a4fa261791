package ringbuf

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
)

// RawReader reads a ring buffer in place, for one goroutine at a time: the
// API of cilium/ebpf main's RawReader. Samples are views of the ring,
// handed out inside a lease ([RawReader.WithLease]) and valid until the lease commits
// them or ends.
//
// A second goroutine that calls WithLease while a lease runs gets an
// error, and so does a Lease used after its WithLease returned. Close,
// Flush and SetDeadline may be called from any goroutine at any time, also
// while a lease waits for samples, and Close also from inside a lease.
// Use [Reader] to read from several goroutines.
type RawReader struct {
	rd *Reader // its engine, mapping and cleanup; its own methods go unused
	// leaseID counts the leases begun and ended: it is odd while a lease
	// runs, and then names the one Lease that may be used.
	leaseID     atomic.Uint64
	*leaseState // behind a pointer, so that RawReader stays comparable, as upstream's is
}

// leaseState is owned by the goroutine in the lease.
type leaseState struct {
	held     []claim // claims of the samples read since the last commit, in ring order
	pos      uint64  // the next record, up to end
	end      uint64  // the end of the last held claim; pos if none is held
	area     dataArea
	producer position // the kernel's producer position
	op       waitState
	// inUse: the last sample handed out had records after it (remain >
	// 0), so its view may still be in use when the ring runs dry.
	inUse bool
}

// errConcurrent is returned by WithLease while a lease runs, and by a
// Lease used after its WithLease returned. Nothing is read or committed.
var errConcurrent = errors.New("concurrent use of RawReader")

// NewRawReader creates a RawReader for a ring buffer map. Like [NewReader],
// it starts at the consumer position the map holds.
func NewRawReader(m *ebpf.Map) (*RawReader, error) {
	rd, err := NewReader(m)
	if err != nil {
		return nil, err
	}
	if rd.copyOnly != nil {
		return nil, errors.Join(errCopyOnly, rd.Close())
	}
	return &RawReader{rd: rd, leaseState: &leaseState{}}, nil
}

// WithLease calls fn with a [Lease] on the ring: fn reads samples with
// [Lease.ReadSample] and commits them with [Lease.Commit], batching commits if
// it likes. The Lease is valid until fn returns; then what fn read and did
// not commit is committed, also if fn panics. WithLease returns fn's
// error, ErrClosed if the reader is closed, or an error if a lease is
// running already (in another goroutine, or around this call).
func (rr *RawReader) WithLease(fn func(Lease) error) error {
	id := rr.leaseID.Load()
	if id%2 == 1 || !rr.leaseID.CompareAndSwap(id, id+1) {
		return fmt.Errorf("ringbuf: %w: a lease is running", errConcurrent)
	}
	id++
	rr.op = waitState{}
	if err := rr.rd.core.Begin(&rr.op); err != nil {
		rr.leaseID.Add(1)
		return fmt.Errorf("ringbuf: %w", err)
	}
	defer rr.endLease()
	return fn(Lease{rr: rr, id: id})
}

// endLease commits what the lease read and ends it, however fn returned.
func (rr *RawReader) endLease() {
	defer rr.leaseID.Add(1) // last: the next lease finds this one ended
	e := rr.rd.engine
	e.core.Mu.Lock()
	defer e.core.Mu.Unlock()
	rr.commitLocked()
	e.core.EndLoopLocked(&rr.op)
}

// commitLocked releases the lease's claims, consumed up to pos, and tells
// the kernel.
func (rr *RawReader) commitLocked() {
	e := rr.rd.engine
	c := &e.consumers[0]
	for i, cl := range rr.held {
		upTo := cl.End
		if i == len(rr.held)-1 {
			upTo = rr.pos // the rest goes back, to be claimed again
		}
		e.core.UserDoneLocked(0, c.claims.Release(cl, upTo))
	}
	rr.held, rr.end, rr.inUse = rr.held[:0], rr.pos, false
	if !e.core.Freed() {
		c.publish()
	}
}

// Lease is a RawReader's lease, valid inside the WithLease call that
// handed it out.
type Lease struct {
	rr *RawReader
	id uint64
}

// enter checks that the Lease's WithLease is running. A Lease that two
// goroutines use at once is a data race, which go test -race reports, as
// with upstream's: a check on every call would cost a fifth of a
// ReadSample (BenchmarkRawReader, commit batch 1000).
func (s Lease) enter() error {
	rr := s.rr
	if rr == nil || rr.leaseID.Load() != s.id {
		return fmt.Errorf("ringbuf: %w: Lease used outside its WithLease", errConcurrent)
	}
	return nil
}

// ReadSample returns the next sample, a view of the ring, read-only, with
// its capacity equal to its length, and remain, how many bytes at least
// the ring held after it. Samples the producer discarded are skipped. The
// view is valid until [Lease.Commit] or the end of the lease, as in cilium/ebpf
// main, with one exception that lets a lease wait without polling: the
// kernel wakes a reader only once it has consumed everything before a new
// record, so a ReadSample that finds the ring empty commits before it
// waits. It does so only after a sample returned with remain 0, or
// after Commit; after one with remain > 0 it waits keeping the views.
//
// ReadSample blocks until a sample arrives, the deadline passes, Flush or
// Close is called, and commits before it returns an error: those of
// Reader.Read, os.ErrDeadlineExceeded, ErrFlushed (once every sample in
// the ring was read), ErrClosed (after the samples the lease had claimed
// when Close was called), [ErrCorrupt].
func (s Lease) ReadSample() (data []byte, remain int, err error) {
	if err := s.enter(); err != nil {
		return nil, 0, err
	}
	rr := s.rr
	for {
		// Below end the records are claimed and the mapping stays: the
		// walk takes no lock.
		busy := false
		for rr.pos < rr.end {
			h := rr.area.headerAt(rr.pos)
			total := h.total()
			if busy = h.busy(); busy || total > rr.end-rr.pos {
				break // being written, or corrupt: more below
			}
			pos := rr.pos
			rr.pos += total
			if !h.discarded() {
				// A load of our own, as upstream's: remain 0 says that the
				// next ReadSample may wait, and so commit.
				remain := max(int64(rr.producer.load(rr.pos)-rr.pos), 0)
				rr.inUse = remain > 0
				return rr.area.sample(pos, h.length()), int(remain), nil
			}
		}
		if err := rr.more(busy); err != nil {
			return nil, 0, err
		}
	}
}

// more claims the records produced after the held ones, backs off while
// a producer writes the next one, or, with none produced, waits for some:
// after committing, unless the last sample's view may be in use.
func (rr *RawReader) more(busy bool) error {
	e := rr.rd.engine
	e.core.Mu.Lock()
	defer e.core.Mu.Unlock()
	e.core.BackLocked(&rr.op)
	defer e.core.AwayLocked(&rr.op) // ReadSample returns to the lease's code
	c := &e.consumers[0]
	if !busy && rr.pos < rr.end && c.err == nil {
		c.err = c.ring.corrupt(rr.pos, rr.end, c.ring.headerAt(rr.pos))
	}
	for {
		var err error
		switch {
		case e.core.Wait.Closed():
			err = ErrClosed
		case c.err != nil:
			err = c.err
		case busy:
			// The record is there, only not submitted yet: back off
			// keeping the views, no wake-up is needed to see it.
			if err = e.core.WaitLocked(&rr.op, true); err == nil {
				return nil
			}
		default:
			if cl, ok, _ := c.claimBatch(true); ok {
				e.core.AddUserLocked()
				if len(rr.held) == 0 {
					rr.pos = cl.Start
				}
				rr.held = append(rr.held, cl)
				rr.end, rr.area, rr.producer = cl.End, c.ring.dataArea, c.ring.producerPos
				return nil
			}
			if c.err != nil {
				continue
			}
			// The ring is empty: commit, so that the kernel wakes us for
			// the next record, then wait for it. After a sample with
			// remain > 0 (records discarded after it) keep the claims:
			// the wait polls (heldClaimPoll), as the kernel wakes only
			// a reader that caught up.
			if !rr.inUse {
				rr.commitLocked()
			}
			if err = e.core.WaitLocked(&rr.op, false); err == nil {
				continue
			}
		}
		rr.commitLocked()
		return err
	}
}

// Commit commits the samples read so far: their views end, and the kernel
// may reuse their space. It does nothing on a Lease whose WithLease has
// returned: everything that lease read was committed then.
func (s Lease) Commit() {
	if s.enter() != nil {
		return
	}
	rr := s.rr
	rr.rd.core.Mu.Lock()
	rr.commitLocked()
	rr.rd.core.Mu.Unlock()
}

// BufferSize returns the size of the ring's data area in bytes.
func (rr *RawReader) BufferSize() int {
	return rr.rd.BufferSize()
}

// AvailableBytes returns how many bytes of the ring the kernel has not
// had back from this reader: samples not yet read, and those read but not
// committed. It is 0 once the reader is closed.
func (rr *RawReader) AvailableBytes() int {
	return rr.rd.AvailableBytes()
}

// SetDeadline is [Reader.SetDeadline]: ReadSample returns
// os.ErrDeadlineExceeded after t, also if it is already waiting.
func (rr *RawReader) SetDeadline(t time.Time) { rr.rd.SetDeadline(t) }

// Flush is [Reader.Flush]: a ReadSample that waits (or, with none, the next
// that finds the ring empty) returns ErrFlushed once the ring is empty.
func (rr *RawReader) Flush() error { return rr.rd.Flush() }

// Close is [Reader.Close]: a waiting ReadSample returns ErrClosed, and
// has returned when Close returns; so does WithLease from then on. A lease that runs reads the samples it had
// claimed, then ErrClosed; the ring is unmapped when it ends.
func (rr *RawReader) Close() error { return rr.rd.Close() }
