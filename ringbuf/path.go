package ringbuf

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// readPath is how a Reader reads a ring buffer map.
type readPath int

const (
	// pathMapped maps the ring and reads it in place: a
	// BPF_MAP_TYPE_RINGBUF map on Linux, every API.
	pathMapped readPath = iota
	// pathUpstream reads through cilium/ebpf's own ringbuf.Reader, the
	// copy API only (upstream.go): a WindowsRingBuf map on eBPF for
	// Windows, whose ring cilium/ebpf maps through the eBPF for Windows
	// runtime.
	pathUpstream
)

// choosePath picks the path for a map of type typ on the operating system
// goos (runtime.GOOS). It is a pure function of both, so that tests on
// Linux can check where a Windows map goes.
func choosePath(typ ebpf.MapType, goos string) (readPath, error) {
	switch {
	case goos == "linux" && typ == ebpf.RingBuf:
		return pathMapped, nil
	case goos == "windows" && typ == ebpf.WindowsRingBuf:
		return pathUpstream, nil
	case goos != "linux" && goos != "windows":
		return 0, fmt.Errorf("ring buffers on %s: %w", goos, ebpf.ErrNotSupported)
	case typ == ebpf.RingBuf || typ == ebpf.WindowsRingBuf:
		return 0, fmt.Errorf("map type %s on %s: %w", typ, goos, ebpf.ErrNotSupported)
	}
	return 0, fmt.Errorf("map type %s is not a ring buffer (%s on Linux, %s on Windows)", typ, ebpf.RingBuf, ebpf.WindowsRingBuf)
}

// requireMapped is choosePath for a reader that maps every ring
// (MultiReader): a map for pathUpstream gets errCopyOnly.
func requireMapped(typ ebpf.MapType, goos string) error {
	path, err := choosePath(typ, goos)
	if err == nil && path != pathMapped {
		err = errCopyOnly
	}
	return err
}
