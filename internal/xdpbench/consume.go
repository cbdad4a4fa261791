//go:build linux

package xdpbench

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"
	upstream "github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/readloop"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// consumer takes events out of one map. run goes on the consumer's own
// thread until stop is called from another goroutine; then it returns
// once it has read what was in the map when it saw the stop.
type consumer interface {
	run(s *sink) error
	stop()
	lost() uint64 // events the transport says it dropped, if it counts them
	close() error
}

func newConsumer(st Strategy, m *ebpf.Map, perfPerCPU int) (consumer, error) {
	switch st.Consumer {
	case NoConsumer:
		return &idleConsumer{done: make(chan struct{})}, nil
	case PerfEpoll:
		rd, err := perf.NewReader(m, perfPerCPU)
		if err != nil {
			return nil, fmt.Errorf("perf reader: %w", err)
		}
		return &perfConsumer{rd: rd}, nil
	case PerfRecordsEpoll:
		return newPerfRecordsConsumer(m, perfPerCPU)
	case UpstreamReadInto, UpstreamSleep:
		rd, err := upstream.NewReader(m)
		if err != nil {
			return nil, fmt.Errorf("upstream ringbuf reader: %w", err)
		}
		if st.Consumer == UpstreamSleep {
			return &upstreamSleeper{rd: rd, pause: st.Sleep}, nil
		}
		return &upstreamConsumer{rd: rd}, nil
	case RecordsEpoll, RecordsBusyPoll, RecordsSleep:
		rd, err := ringbuf.NewReader(m)
		if err != nil {
			return nil, err
		}
		c := &recordsConsumer{rd: rd, mode: st.Consumer, pause: st.Sleep}
		return c, nil
	}
	return nil, fmt.Errorf("xdpbench: unknown consumer %d", st.Consumer)
}

// idleConsumer waits for the stop, spending no CPU: the baseline.
type idleConsumer struct{ done chan struct{} }

func (c *idleConsumer) run(*sink) error { <-c.done; return nil }
func (c *idleConsumer) stop()           { close(c.done) }
func (c *idleConsumer) lost() uint64    { return 0 }
func (c *idleConsumer) close() error    { return nil }

// perfConsumer reads with cilium/ebpf's perf.Reader; Flush stops it.
type perfConsumer struct {
	rd   *perf.Reader
	lose uint64
}

func (c *perfConsumer) run(s *sink) (err error) {
	c.lose, err = readloop.Perf(c.rd, s.event)
	return err
}
func (c *perfConsumer) stop()        { c.rd.Flush() }
func (c *perfConsumer) lost() uint64 { return c.lose }
func (c *perfConsumer) close() error { return c.rd.Close() }

// upstreamConsumer reads with cilium/ebpf's ringbuf.Reader, copying every
// record; Flush stops it.
type upstreamConsumer struct{ rd *upstream.Reader }

func (c *upstreamConsumer) run(s *sink) error { return readloop.Upstream(c.rd, s.event) }
func (c *upstreamConsumer) stop()             { c.rd.Flush() }
func (c *upstreamConsumer) lost() uint64      { return 0 }
func (c *upstreamConsumer) close() error      { return c.rd.Close() }

// upstreamSleeper drains with cilium/ebpf's ReadInto and a deadline in
// the past, then sleeps, like recordsConsumer's sleeping mode.
type upstreamSleeper struct {
	rd      *upstream.Reader
	pause   time.Duration
	stopped atomic.Bool
}

func (c *upstreamSleeper) run(s *sink) error {
	c.rd.SetDeadline(time.Unix(1, 0))
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("timer slack: %w", err)
	}
	ts := unix.NsecToTimespec(c.pause.Nanoseconds())
	var rec upstream.Record
	for {
		last := c.stopped.Load()
		// The same look before draining as recordsConsumer: an empty
		// ReadInto would cost an epoll_wait.
		if last || c.rd.AvailableBytes() > 0 {
			for {
				err := c.rd.ReadInto(&rec)
				if errors.Is(err, os.ErrDeadlineExceeded) {
					break
				}
				if err != nil {
					return err
				}
				s.event(rec.RawSample)
			}
		}
		if last {
			return nil
		}
		unix.Nanosleep(&ts, nil)
	}
}
func (c *upstreamSleeper) stop()        { c.stopped.Store(true) }
func (c *upstreamSleeper) lost() uint64 { return 0 }
func (c *upstreamSleeper) close() error { return c.rd.Close() }

// recordsConsumer ranges over our Reader's Records: blocking in epoll,
// busy-polling, or sleeping between drains.
type recordsConsumer struct {
	rd      *ringbuf.Reader
	mode    Consumer
	pause   time.Duration
	stopped atomic.Bool
}

func (c *recordsConsumer) run(s *sink) error {
	if c.mode == RecordsEpoll {
		return readloop.Records(c.rd, s.event)
	}
	// A deadline in the past makes Records yield what the ring holds and
	// end with os.ErrDeadlineExceeded instead of sleeping; on the way out
	// it tells the kernel how far we have read.
	c.rd.SetDeadline(time.Unix(1, 0))
	if c.mode == RecordsSleep {
		// The default timer slack (50 µs) would stretch every sleep by up
		// to that much; this thread is thrown away afterwards.
		if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("timer slack: %w", err)
		}
	}
	ts := unix.NsecToTimespec(c.pause.Nanoseconds())
	for {
		// Read the flag before draining, so the drain after the stop is
		// a full one.
		last := c.stopped.Load()
		// Look before ranging: AvailableBytes costs a few nanoseconds
		// and allocates nothing, while each Records call allocates its
		// iterator, and a busy loop's garbage brings the collector,
		// whose pauses stall this pinned thread (p99 1.3 ms instead of
		// 17 µs at 80 kpps).
		if last || c.rd.AvailableBytes() > 0 {
			if err := c.drain(s); err != nil {
				return err
			}
		}
		if last {
			return nil
		}
		if c.mode == RecordsSleep {
			unix.Nanosleep(&ts, nil)
		}
	}
}

// drain yields everything in the ring to s.
func (c *recordsConsumer) drain(s *sink) error {
	for rec, err := range c.rd.Records() {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
		s.event(rec.RawSample)
	}
	return nil
}

func (c *recordsConsumer) stop() {
	if c.mode == RecordsEpoll {
		c.rd.Flush()
		return
	}
	c.stopped.Store(true)
}
func (c *recordsConsumer) lost() uint64 { return 0 }
func (c *recordsConsumer) close() error { return c.rd.Close() }
