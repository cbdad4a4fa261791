//go:build linux

package ringbuf

import (
	"errors"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
)

// TestWriterClosedMap checks that NewWriter refuses a closed map for its
// descriptor, whatever its type: a closed Map still reports the type it
// had, so a closed ring buffer must not pass for a map of the wrong type.
func TestWriterClosedMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func(testing.TB, int) *ebpf.Map
	}{
		{"user ring", newUserRingMap},
		{"ring", newRingMap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.new(t, 4096)
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(m)
			if err == nil {
				w.Close()
				t.Fatal("a closed map accepted")
			}
			if !errors.Is(err, syscall.EBADF) {
				t.Errorf("NewWriter of a closed map: %q, want EBADF", err)
			}
		})
	}
}
