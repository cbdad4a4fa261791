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
// handed out inside a lease (WithLease) and valid until the lease commits
// them or ends.
//
// A second goroutine that calls WithLease while a lease runs gets an
// error, and so does a Lease used after its WithLease returned. Close,
// Flush and SetDeadline may be called from any goroutine at any time, also
// while a lease waits for samples, and Close also from inside a lease.
// Use Reader to read from several goroutines.
type RawReader struct {
	rd          *Reader       // its engine, mapping and cleanup; its own methods go unused
	state       atomic.Int32  // leaseIdle, leaseHeld or leaseBusy
	leaseID     atomic.Uint64 // odd while a lease runs: the Lease that may be used
	*leaseState               // behind a pointer, so that RawReader stays comparable, as upstream's is
}

// leaseState is owned by the goroutine in the lease (RawReader.state says
// which one).
type leaseState struct {
	held     []claim // claims of the samples read since the last commit, in ring order
	pos      uint64  // the next record, inside the last held claim
	producer uint64  // producer position when the last claim was made
	op       waitState
}

// States of a RawReader: no lease, a lease running, a lease method running.
const (
	leaseIdle int32 = iota
	leaseHeld
	leaseBusy
)

// errConcurrent is returned to a second goroutine that enters a RawReader
// or its Lease while another one is inside, and for a Lease used after its
// WithLease returned. Nothing is read or committed.
var errConcurrent = errors.New("concurrent use of RawReader")

// NewRawReader creates a RawReader for a ring buffer map. Like NewReader,
// it starts at the consumer position the map holds.
func NewRawReader(m *ebpf.Map) (*RawReader, error) {
	rd, err := NewReader(m)
	if err != nil {
		return nil, err
	}
	return &RawReader{rd: rd, leaseState: &leaseState{}}, nil
}

// WithLease calls fn with a Lease on the ring: fn reads samples with
// Lease.ReadSample and commits them with Lease.Commit, batching commits if
// it likes. The Lease is valid until fn returns; then what fn read and did
// not commit is committed, also if fn panics. WithLease returns fn's
// error, ErrClosed if the reader is closed, or an error if another
// goroutine holds a lease.
func (rr *RawReader) WithLease(fn func(Lease) error) error {
	if !rr.state.CompareAndSwap(leaseIdle, leaseHeld) {
		return fmt.Errorf("ringbuf: %w: another goroutine holds a lease", errConcurrent)
	}
	defer rr.state.Store(leaseIdle)
	e := &rr.rd.engine
	e.mu.Lock()
	err := e.wait.Begin()
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("ringbuf: %w", err)
	}
	rr.op = waitState{}
	id := rr.leaseID.Add(1)
	defer rr.endLease()
	return fn(Lease{rr: rr, id: id})
}

// endLease commits what the lease read and ends it, however fn returned.
func (rr *RawReader) endLease() {
	rr.leaseID.Add(1)
	e := &rr.rd.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	rr.commitLocked()
	e.wait.End()
	e.releaseLocked()
}

// commitLocked releases the lease's claims, consumed up to pos, and tells
// the kernel.
func (rr *RawReader) commitLocked() {
	e := &rr.rd.engine
	c := &e.rings[0]
	for i, cl := range rr.held {
		upTo := cl.End
		if i == len(rr.held)-1 {
			upTo = rr.pos // the rest goes back, to be claimed again
		}
		e.releasedLocked(c, c.claims.Release(cl, upTo))
	}
	rr.held = rr.held[:0]
	if !e.released {
		c.publish()
	}
}

// Lease is a RawReader's lease, valid inside the WithLease call that
// handed it out.
type Lease struct {
	rr *RawReader
	id uint64
}

// enter marks a Lease method running, or says why it may not.
func (s Lease) enter() error {
	rr := s.rr
	if rr == nil || rr.leaseID.Load() != s.id {
		return fmt.Errorf("ringbuf: %w: Lease used outside its WithLease", errConcurrent)
	}
	if !rr.state.CompareAndSwap(leaseHeld, leaseBusy) {
		return fmt.Errorf("ringbuf: %w: Lease used by two goroutines", errConcurrent)
	}
	return nil
}

// ReadSample returns the next sample, a view of the ring, read-only, with
// its capacity equal to its length, and remain, how many bytes the ring
// held after it when it was read. The view is valid until Commit, or until
// the lease ends. Samples the producer discarded are skipped.
//
// ReadSample blocks until a sample arrives, the deadline passes, Flush or
// Close is called. Before it waits, and before it returns an error, it
// commits, as Commit does: the kernel wakes a reader only once it has
// consumed everything before a new record, so a lease that waited holding
// samples would never be woken. A view read before a ReadSample that
// returned an error, or had to wait, is therefore no longer valid. The
// errors are those of Reader.Read: os.ErrDeadlineExceeded, ErrFlushed
// (once every sample in the ring was read), ErrClosed (after the samples
// the lease had claimed when Close was called), ErrCorrupt.
func (s Lease) ReadSample() (data []byte, remain int, err error) {
	if err := s.enter(); err != nil {
		return nil, 0, err
	}
	rr := s.rr
	defer rr.state.Store(leaseHeld)
	for {
		busy := false
		if n := len(rr.held); n > 0 {
			// Inside a held claim, the mapping stays and the records are
			// ours: the walk takes no lock.
			area, end := rr.rd.rings[0].ring.dataArea, rr.held[n-1].End
			for rr.pos < end {
				h := area.headerAt(rr.pos)
				total := h.total()
				if busy = h.busy(); busy || total > end-rr.pos {
					break // being written, or corrupt: more below
				}
				pos := rr.pos
				rr.pos += total
				if !h.discarded() {
					return area.sample(pos, h.length()), int(rr.producer - rr.pos), nil
				}
			}
		}
		if err := rr.more(busy); err != nil {
			return nil, 0, err
		}
	}
}

// more claims the records produced after the held ones, or, with none
// ready, commits and waits for some.
func (rr *RawReader) more(busy bool) error {
	e := &rr.rd.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	c := &e.rings[0]
	for {
		if n := len(rr.held); n > 0 && !busy && rr.pos < rr.held[n-1].End && c.err == nil {
			end := rr.held[n-1].End
			c.err = c.ring.corrupt(rr.pos, end, c.ring.headerAt(rr.pos))
		}
		switch {
		case e.wait.Closed():
			rr.commitLocked()
			return ErrClosed
		case c.err != nil:
			rr.commitLocked()
			return c.err
		}
		if !busy && (len(rr.held) == 0 || rr.pos == rr.held[len(rr.held)-1].End) {
			if cl, ok, ringBusy := c.claimBatch(true); ok {
				e.claimedLocked()
				if len(rr.held) == 0 {
					rr.pos = cl.Start
				}
				rr.held = append(rr.held, cl)
				rr.producer = c.producerPos
				return nil
			} else if c.err == nil {
				busy = ringBusy
			}
			if c.err != nil {
				continue
			}
		}
		rr.commitLocked()
		if err := e.waitLocked(&rr.op, busy); err != nil {
			return err
		}
		busy = false
	}
}

// Commit commits the samples read so far: their views end, and the kernel
// may reuse their space. It does nothing when called on a Lease whose
// WithLease has returned (everything it read was committed then) or from
// a second goroutine.
func (s Lease) Commit() {
	if s.enter() != nil {
		return
	}
	rr := s.rr
	rr.rd.mu.Lock()
	rr.commitLocked()
	rr.rd.mu.Unlock()
	rr.state.Store(leaseHeld)
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

// SetDeadline is Reader.SetDeadline: ReadSample returns
// os.ErrDeadlineExceeded after t, also if it is already waiting.
func (rr *RawReader) SetDeadline(t time.Time) { rr.rd.SetDeadline(t) }

// Flush is Reader.Flush: a ReadSample that waits (or, with none, the next
// that finds the ring empty) returns ErrFlushed once the ring is empty.
func (rr *RawReader) Flush() error { return rr.rd.Flush() }

// Close is Reader.Close: a waiting ReadSample returns ErrClosed, and so
// does WithLease from then on. A lease that runs reads the samples it had
// claimed, then ErrClosed; the ring is unmapped when it ends.
func (rr *RawReader) Close() error { return rr.rd.Close() }
