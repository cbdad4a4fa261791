//go:build linux

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
	sink     uint64 // what the look-ahead loads read, kept so they are not compiled away
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
		next, walked, part, stop, sink := walk(data, r.mask, consumer, producer, n-got, all)
		consumer, got, sum, f.sink = next, got+walked, sum+part, f.sink+sink
		if stop == stopBusy {
			err = ErrBusy
			break
		}
		if stop == stopPastProducer {
			header := atomic.LoadUint32((*uint32)(unsafe.Add(data, consumer&r.mask)))
			err = pastProducer(header&lengthMask, consumer, producer)
			break
		}
	}
	f.consumer, f.producer = consumer, producer
	r.publish(consumer)
	if err != nil {
		return sum, fmt.Errorf("floor: after %d of %d samples: %w", got, n, err)
	}
	return sum, nil
}

// stopReason says why walk returned before taking n samples.
type stopReason uint8

const (
	stopNone         stopReason = iota // n samples taken, or the producer reached
	stopBusy                           // the record at consumer is being written
	stopPastProducer                   // the record at consumer ends beyond producer
)

// Look-ahead: walking a ring is a chain of dependent loads, each header
// giving the next one's address, so the core has one miss in flight at a
// time. For records of lookAheadMinStep bytes or more, walk also reads the
// header lookAheadRecords records further on, guessing that the records
// there are as long as this one; the guess is only a load, never trusted.
// Measured with interleaved BenchmarkRead runs on a 2-core AMD EPYC guest
// (64 MiB ring unless said), touch=head: 2 records ahead beat 4 by 17 %
// at 2 KiB (p=0.004) and 8 was worse than none; 4 ahead had beaten none by
// 29 % at 2 KiB (p=0.029), and roughly doubled 256 B and 1 KiB with a
// 512 KiB ring; below 256 B nothing changed significantly. With
// touch=all, where the consumer streams through every byte, it cost
// (256 B: 14 against 21 Mrec/s without it; 2 KiB: 4.0 against 5.4), so
// it is off there: a floor may know its consumer, a reader cannot. (The
// raw runs of these were not kept; docs/batch-walk.md holds the later
// look-ahead measurements with their data.)
const (
	lookAheadRecords = 2
	lookAheadMinStep = 256
)

// walk takes up to n samples from consumer on, not beyond producer, and
// returns the position after the last record it passed. It calls nothing
// and stores nothing to memory, so that the whole walk stays in registers:
// Drain's slow paths (reloading the producer position, building errors)
// live outside it.
func walk(data unsafe.Pointer, mask, consumer, producer uint64, n int, all bool) (next uint64, got int, sum uint64, stop stopReason, sink uint64) {
	for got < n && consumer != producer {
		header := atomic.LoadUint32((*uint32)(unsafe.Add(data, consumer&mask)))
		if header&busyBit != 0 {
			return consumer, got, sum, stopBusy, sink
		}
		length := header & lengthMask
		step := recordStep(length)
		if step > producer-consumer {
			return consumer, got, sum, stopPastProducer, sink
		}
		if !all && step >= lookAheadMinStep {
			sink += uint64(*(*uint32)(unsafe.Add(data, (consumer+lookAheadRecords*step)&mask)))
		}
		if header&discardBit == 0 {
			sum += Touch(unsafe.Slice((*byte)(unsafe.Add(data, consumer&mask+headerSize)), length), all)
			got++
		}
		consumer += step
	}
	return consumer, got, sum, stopNone, sink
}
