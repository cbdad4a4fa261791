package ringbuf

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/cilium/ebpf"
)

// readPath is how a Reader reads a ring buffer map.
type readPath int

const (
	pathMapped   readPath = iota // a RingBuf map on Linux, mapped: every API
	pathUpstream                 // a WindowsRingBuf map, by cilium/ebpf's reader: the copy API
)

// choosePath is pure so that tests on Linux check where a Windows map goes.
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

// requireMapped is choosePath for a reader that maps its rings: a map for
// pathUpstream gets errCopyOnly.
func requireMapped(typ ebpf.MapType, goos string) error {
	path, err := choosePath(typ, goos)
	if err == nil && path != pathMapped {
		err = errCopyOnly
	}
	return err
}

// ringSize returns the size of m's data area, a power-of-two number of pages.
func ringSize(m *ebpf.Map) (uint64, error) {
	size := uint64(m.MaxEntries())
	if size == 0 || size&(size-1) != 0 || size%uint64(os.Getpagesize()) != 0 {
		return 0, fmt.Errorf("size %d is not a power-of-two number of pages", size)
	}
	return size, nil
}

// checkMap refuses a nil map, and a closed one with EBADF as the kernel would,
// before its type, flags or size, which a closed Map still reports.
func checkMap(m *ebpf.Map) error {
	switch {
	case m == nil:
		return errors.New("nil map")
	case m.FD() < 0:
		return fmt.Errorf("map %v is closed: its file descriptor: %w", m, syscall.EBADF)
	}
	return nil
}

// errCopyOnly is what the zero-copy API returns on a WindowsRingBuf map,
// whose ring the eBPF for Windows runtime maps out of our reach.
var errCopyOnly = fmt.Errorf("zero-copy reads of a %s map (Peek, PeekInto, Consume, Records, Batches, MultiReader): %w",
	ebpf.WindowsRingBuf, ebpf.ErrNotSupported)
