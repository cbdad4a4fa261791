//go:build linux

package perf

import (
	"testing"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestCloseIsABarrier: when Close returns, every Read, ReadInto, Records
// and Batches loop that was blocked has returned with ErrClosed, as with
// cilium/ebpf's perf.Reader.
func TestCloseIsABarrier(t *testing.T) {
	for _, tc := range []struct {
		name    string
		callers int
		call    func(r *Reader) error
	}{
		{"Read", 3, func(r *Reader) error { _, err := r.Read(); return err }},
		{"ReadInto", 3, func(r *Reader) error { var rec Record; return r.ReadInto(&rec) }},
		{"Records", 3, func(r *Reader) error {
			for _, err := range r.Records() {
				if err != nil && !IsUnknownEvent(err) {
					return err
				}
			}
			return nil
		}},
		{"Batches", 3, func(r *Reader) error { return bpftest.LoopUntilError(batchRecords(r)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bpftest.CheckCloseBarrier(t, 20, tc.callers, func(t *testing.T) (func() error, func() error) {
				r := newTestReader(t, newEventArray(t), 4096, ReaderOptions{})
				return func() error { return tc.call(r) }, r.Close
			})
		})
	}
}
