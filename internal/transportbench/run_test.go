//go:build linux

package transportbench

import (
	"strings"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestNewTransportProducerError checks that a producer the kernel side
// cannot build fails newTransport for every transport, rather than
// leaving a transport with no producer and no error.
func TestNewTransportProducerError(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Case
	}{
		{"perf", Case{Perf, PerfReadInto}},
		{"ringbuf", Case{Ringbuf, Records}},
		{"queue", Case{Queue, LookupAndDelete}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 4-byte events are too short for the sequence number, so
			// every producer refuses them after the map and the reader
			// exist.
			cfg := Config{Case: tc.c, Size: 4}
			cfg.fill()
			tr, err := newTransport(cfg)
			if bpftest.Unavailable(err) {
				bpftest.SkipIfUnavailable(t, err, string(tc.c.Transport)+" maps")
			}
			if err == nil {
				if tr.producer == nil {
					t.Error("newTransport returned a transport without a producer and no error")
				} else {
					t.Error("newTransport accepted 4-byte events")
				}
				if cerr := tr.close(); cerr != nil {
					t.Error(cerr)
				}
				return
			}
			if tr != nil {
				t.Errorf("newTransport returned a transport with its error %v", err)
			}
			if !strings.Contains(err.Error(), "record size 4") {
				t.Errorf("error = %v, want the producer's record size error", err)
			}
		})
	}
}
