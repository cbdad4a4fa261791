package ringbuf

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
)

// TestChoosePath: where NewReader sends a map of each type on each
// operating system. A WindowsRingBuf map on Windows goes to
// cilium/ebpf's reader (TestUpstreamPath runs that path on Linux).
func TestChoosePath(t *testing.T) {
	for _, tc := range []struct {
		typ          ebpf.MapType
		goos         string
		want         readPath
		notSupported bool // the error wraps ebpf.ErrNotSupported
		fails        bool // some other error
	}{
		{typ: ebpf.RingBuf, goos: "linux", want: pathMapped},
		{typ: ebpf.WindowsRingBuf, goos: "windows", want: pathUpstream},
		{typ: ebpf.RingBuf, goos: "windows", notSupported: true},
		{typ: ebpf.WindowsRingBuf, goos: "linux", notSupported: true},
		{typ: ebpf.RingBuf, goos: "darwin", notSupported: true},
		{typ: ebpf.Hash, goos: "freebsd", notSupported: true},
		{typ: ebpf.Hash, goos: "linux", fails: true},
		{typ: ebpf.WindowsHash, goos: "windows", fails: true},
	} {
		got, err := choosePath(tc.typ, tc.goos)
		switch {
		case tc.notSupported:
			if !errors.Is(err, ebpf.ErrNotSupported) {
				t.Errorf("%s on %s: %v, want ErrNotSupported", tc.typ, tc.goos, err)
			}
		case tc.fails:
			if err == nil || errors.Is(err, ebpf.ErrNotSupported) {
				t.Errorf("%s on %s: %v, want an error, not ErrNotSupported", tc.typ, tc.goos, err)
			}
		case err != nil || got != tc.want:
			t.Errorf("%s on %s: path %d, %v, want %d", tc.typ, tc.goos, got, err, tc.want)
		}
	}
	// MultiReader maps every ring: a Windows ring is not for it.
	if err := requireMapped(ebpf.WindowsRingBuf, "windows"); !errors.Is(err, ebpf.ErrNotSupported) {
		t.Errorf("MultiReader of a WindowsRingBuf map on Windows: %v, want ErrNotSupported", err)
	}
	if err := requireMapped(ebpf.RingBuf, "linux"); err != nil {
		t.Errorf("MultiReader of a RingBuf map on Linux: %v", err)
	}
}
