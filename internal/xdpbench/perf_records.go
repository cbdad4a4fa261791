//go:build linux

package xdpbench

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/readloop"
	ourperf "github.com/ebpf-zc/ebpf/perf"
)

// perfRecordsConsumer ranges over our perf.Reader's Records, zero-copy,
// sleeping in epoll while every buffer is empty: the same wake-ups as
// perfConsumer (a watermark of one byte), so only the readers differ.
type perfRecordsConsumer struct {
	rd   *ourperf.Reader
	lose uint64
}

func newPerfRecordsConsumer(m *ebpf.Map, perfPerCPU int) (consumer, error) {
	rd, err := ourperf.NewReader(m, perfPerCPU)
	if err != nil {
		return nil, fmt.Errorf("our perf reader: %w", err)
	}
	return &perfRecordsConsumer{rd: rd}, nil
}

func (c *perfRecordsConsumer) run(s *sink) (err error) {
	c.lose, err = readloop.PerfRecords(c.rd, s.event)
	return err
}

func (c *perfRecordsConsumer) stop()        { c.rd.Flush() }
func (c *perfRecordsConsumer) lost() uint64 { return c.lose }
func (c *perfRecordsConsumer) close() error { return c.rd.Close() }
