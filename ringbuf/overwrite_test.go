//go:build linux

package ringbuf

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// newOverwriteRing creates a ring buffer with BPF_F_RB_OVERWRITE, or
// skips, naming the kernel, where the kernel refuses the flag (before 6.19).
func newOverwriteRing(tb testing.TB, spec *ebpf.MapSpec) *ebpf.Map {
	tb.Helper()
	m, err := ebpf.NewMap(spec)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, ebpf.ErrNotSupported) {
		// Without ring buffers at all, newRingMap skips and says so.
		newRingMap(tb, os.Getpagesize())
		var u unix.Utsname
		if uerr := unix.Uname(&u); uerr != nil {
			tb.Fatal(uerr)
		}
		tb.Skipf("kernel %s lacks overwrite-mode ring buffers (BPF_F_RB_OVERWRITE, Linux 6.19+): %v",
			unix.ByteSliceToString(u.Release[:]), err)
	}
	bpftest.SkipIfNoRingBuf(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}

// TestOverwriteRingRefused checks that every constructor refuses an
// overwrite-mode ring with ErrNotSupported: its producer laps the reader.
func TestOverwriteRingRefused(t *testing.T) {
	ringSpec := &ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(os.Getpagesize()), Flags: rbOverwrite}
	ring := newOverwriteRing(t, ringSpec)
	plain := newRingMap(t, os.Getpagesize())
	outer, err := ebpf.NewMap(&ebpf.MapSpec{
		Type: ebpf.ArrayOfMaps, KeySize: 4, ValueSize: 4, MaxEntries: 1,
		InnerMap: ringSpec,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outer.Close() })
	if err := outer.Put(uint32(0), ring); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		open func() (io.Closer, error)
	}{
		{"NewReader", func() (io.Closer, error) { return NewReader(ring) }},
		{"NewRawReader", func() (io.Closer, error) { return NewRawReader(ring) }},
		// After a readable ring: the refusal must not depend on the order.
		{"NewMultiReader", func() (io.Closer, error) { return NewMultiReader(plain, ring) }},
		// Inner maps come back from their IDs, flags read from the kernel.
		{"NewMultiReaderFromMapOfMaps", func() (io.Closer, error) { return NewMultiReaderFromMapOfMaps(outer) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := tc.open()
			if err == nil {
				rd.Close()
				t.Fatal("an overwrite-mode ring was accepted")
			}
			if !errors.Is(err, ebpf.ErrNotSupported) {
				t.Errorf("error %q does not wrap ebpf.ErrNotSupported", err)
			}
			if !strings.Contains(err.Error(), "overwrite") {
				t.Errorf("error %q does not say overwrite", err)
			}
			t.Log(err)
		})
	}
}
