//go:build linux

package drainbench

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"
)

// upstreamReadInto drains with cilium/ebpf's Reader, ReadInto into a
// reused Record: the mode every cilium/ebpf release has.
type upstreamReadInto struct {
	rd  *upstream.Reader
	rec upstream.Record
}

// OpenUpstream opens cilium/ebpf's Reader on m for a ReadInto drain.
func OpenUpstream(m *ebpf.Map) (Drainer, error) {
	rd, err := upstream.NewReader(m)
	if err != nil {
		return nil, err
	}
	// v0.22.0's Reader waits in epoll before it looks at the ring, and
	// records submitted with BPF_RB_NO_WAKEUP wake nobody. A deadline in
	// the past is upstream's documented way out: the wait gives up at
	// once, the reader reads what is there and reports the deadline after
	// the last record. That costs one epoll_wait per drain, not per record.
	rd.SetDeadline(time.Unix(1, 0))
	return &upstreamReadInto{rd: rd}, nil
}

// Drain implements Drainer.
func (d *upstreamReadInto) Drain(n int, all bool) (sum uint64, err error) {
	expired := 0
	for got := 0; got < n; {
		err := d.rd.ReadInto(&d.rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The previous drain ended at the end of the ring; the next
			// call reads again. Twice in a row means the ring is empty.
			if expired++; expired > 1 {
				return 0, fmt.Errorf("upstream: ring empty after %d of %d records", got, n)
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		expired = 0
		sum += Touch(d.rec.RawSample, all)
		got++
	}
	return sum, nil
}

// Close implements Drainer.
func (d *upstreamReadInto) Close() error { return d.rd.Close() }
