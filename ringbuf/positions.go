package ringbuf

import "fmt"

// RingPositions are a ring's positions as the kernel holds them at one
// instant, as libbpf's ring__consumer_pos, ring__producer_pos,
// ring__avail_data_size and ring__size report them.
type RingPositions struct {
	// Consumer is the consumer position: the records before it are
	// consumed, their space free; a record a loop body or Peek view holds
	// is after it.
	Consumer uint64
	// Producer is the producer position: the records before it are
	// reserved, some maybe still being written.
	Producer uint64
	// Size is the size of the ring's data area in bytes.
	Size int
}

// AvailableBytes returns the bytes between the two positions: records
// produced and not consumed, headers included (ring__avail_data_size).
func (p RingPositions) AvailableBytes() int { return int(p.Producer - p.Consumer) }

// positions reads ring i's positions while rs is open.
func (rs *rings) positions(i int) (RingPositions, error) {
	var p RingPositions
	err := rs.engine.Inspect(func() {
		c := &rs.consumers[i]
		near := c.claims.ConsumerPos() // the kernel's, or behind it
		p = RingPositions{
			Consumer: c.ring.consumerPos.load(near),
			Producer: c.ring.producerPos.load(near),
			Size:     int(c.ring.size),
		}
	})
	if err != nil {
		return RingPositions{}, fmt.Errorf("ringbuf: positions: %w", err)
	}
	return p, nil
}

// available returns the bytes from ring i's consumer position to its
// producer's, 0 once closed: what AvailableBytes reports.
func (rs *rings) available(i int) (n int) {
	rs.engine.Inspect(func() {
		consumed := rs.consumers[i].claims.ConsumerPos()
		n = int(max(rs.consumers[i].ring.producerPos.load(consumed), consumed) - consumed)
	})
	return n
}
