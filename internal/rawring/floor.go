package rawring

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Floor drains a ring with the least work we know how to do in Go while
// still checking what it reads: a local consumer position, one load of
// the producer position per batch (refreshed only when the local position
// reaches it), and one store of the consumer position per Drain. It is
// not safe for concurrent use.
type Floor struct {
	ring     *Ring
	consumer uint64 // local consumer position: everything below is read
	producer uint64 // producer position when last loaded
}

// NewFloor starts a Floor at the consumer position the kernel holds.
func NewFloor(r *Ring) *Floor {
	consumer := atomic.LoadUint64(r.consumerPos)
	return &Floor{ring: r, consumer: consumer, producer: consumer}
}

// Drain consumes exactly n samples, skipping discarded records, and
// returns the sum Touch gives for them. It stops early with ErrEmpty when
// the producer has nothing more, ErrBusy at a record still being written,
// and ErrCorrupt where a header or position cannot be right; the samples
// before that point stay consumed, and the position is published to the
// kernel before it returns, whatever happened.
func (f *Floor) Drain(n int, all bool) (sum uint64, err error) {
	r := f.ring
	data := unsafe.Pointer(unsafe.SliceData(r.data))
	mask := r.mask
	consumer, producer := f.consumer, f.producer
	got := 0
	for got < n {
		if consumer == producer {
			if producer, err = r.loadProducer(consumer); err != nil {
				producer = consumer
				break
			}
			if consumer == producer {
				err = ErrEmpty
				break
			}
		}
		header := atomic.LoadUint32((*uint32)(unsafe.Add(data, consumer&mask)))
		if header&busyBit != 0 {
			err = ErrBusy
			break
		}
		length := header & lengthMask
		step := recordStep(length)
		if step > producer-consumer {
			err = fmt.Errorf("%w: record of %d bytes at position %d runs past the producer at %d",
				ErrCorrupt, length, consumer, producer)
			break
		}
		if header&discardBit == 0 {
			sum += Touch(unsafe.Slice((*byte)(unsafe.Add(data, consumer&mask+headerSize)), length), all)
			got++
		}
		consumer += step
	}
	f.consumer, f.producer = consumer, producer
	r.publish(consumer)
	if err != nil {
		return sum, fmt.Errorf("floor: after %d of %d samples: %w", got, n, err)
	}
	return sum, nil
}
