//go:build linux

package rawring

import (
	"errors"
	"sync/atomic"
	"unsafe"
)

// errLeaseTaken is what WithLease returns while another lease is open.
var errLeaseTaken = errors.New("rawring: reader already leased")

// RawReader is cilium/ebpf main's RawReader technique, reduced to the
// ring: a local consumer position that ReadSample advances, and a Commit
// that publishes it, so that a caller decides how often the kernel sees
// its progress. Access goes through a Lease, whose samples alias the ring
// until the next Commit or the end of the lease. It never waits: an empty
// ring is ErrEmpty.
type RawReader struct {
	ring     *Ring
	consumer uint64      // local consumer position
	leased   atomic.Bool // one lease at a time, checked, not trusted
}

// NewRawReader starts a RawReader at the consumer position the kernel
// holds.
func NewRawReader(r *Ring) *RawReader {
	return &RawReader{ring: r, consumer: atomic.LoadUint64(r.consumerPos)}
}

// WithLease calls fn with sole use of rr and returns what fn returns. A
// second lease taken while one is open fails instead of racing.
func (rr *RawReader) WithLease(fn func(Lease) error) error {
	if !rr.leased.CompareAndSwap(false, true) {
		return errLeaseTaken
	}
	defer rr.leased.Store(false)
	return fn(Lease{rr: rr})
}

// Lease is the use of a RawReader inside one WithLease call; it must not
// be kept past it.
type Lease struct {
	rr *RawReader
}

// ReadSample returns the next sample and how many bytes the producer had
// written past it, and moves the local consumer position over it. The
// sample aliases the ring until Commit or the end of the lease. A
// discarded record gives a nil sample and no error. As main's does, each
// call loads the producer position once.
func (l Lease) ReadSample() (sample []byte, remain int, err error) {
	rr := l.rr
	r := rr.ring
	consumer := rr.consumer
	producer, err := r.loadProducer(consumer)
	if err != nil {
		return nil, 0, err
	}
	if producer == consumer {
		return nil, 0, ErrEmpty
	}
	start := consumer & r.mask
	header := atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[start])))
	if header&busyBit != 0 {
		return nil, 0, ErrBusy
	}
	length := header & lengthMask
	step := recordStep(length)
	if step > producer-consumer {
		return nil, 0, pastProducer(length, consumer, producer)
	}
	rr.consumer = consumer + step
	remain = int(producer - rr.consumer)
	if header&discardBit != 0 {
		return nil, remain, nil
	}
	return r.data[start+headerSize : start+headerSize+uint64(length)], remain, nil
}

// Commit publishes the local consumer position: the kernel may reuse the
// space of every sample read so far, and those samples are no longer
// valid.
func (l Lease) Commit() {
	l.rr.ring.publish(l.rr.consumer)
}
