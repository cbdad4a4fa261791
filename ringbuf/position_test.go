//go:build linux

package ringbuf

import (
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/ulong"
)

// TestPositionsAcross4GiB reads records on both sides of position 2^32,
// where a 32-bit kernel's positions wrap (ulong.Is32: a 32-bit process
// under a linux32 personality takes this kernel for one, and then reads
// and writes the low words only). Every record comes out once and in
// order, and the consumer word holds what the kernel's word size says.
func TestPositionsAcross4GiB(t *testing.T) {
	f := newFakeRing(t, 4096)
	start := uint64(1<<32 - 64)
	f.positions[0], f.positions[1] = start, start
	r, err := f.reader(t)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20 // 16 bytes each: the fifth starts at 2^32
	for i := range n {
		f.write([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7})
	}
	samples, err := readAll(t, r)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read ended with %v", err)
	}
	if len(samples) != n {
		t.Fatalf("%d records, want %d", len(samples), n)
	}
	for i, s := range samples {
		if s[0] != byte(i) {
			t.Fatalf("record %d is %d", i, s[0])
		}
	}
	end := start + n*16
	got := atomic.LoadUint64(&f.positions[0])
	if ulong.Is32 {
		// The kernel has 32 bits of it: the low word wrapped, the
		// rest of the 64-bit word is not the kernel's.
		if uint32(got) != uint32(end) {
			t.Fatalf("32-bit kernel's consumer word %#x, want %#x", uint32(got), uint32(end))
		}
	} else if got != end {
		t.Fatalf("kernel's consumer position %#x, want %#x", got, end)
	}
	if avail := r.AvailableBytes(); avail != 0 {
		t.Fatalf("AvailableBytes %d after reading everything", avail)
	}
	t.Logf("ulong.Is32 = %v: consumer word %#x", ulong.Is32, got)
}
