package vmtest_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
)

// These tests exercise the running kernel, not the runner: inside the VMs
// they give every kernel of the matrix a real BPF check whose outcome
// depends on the kernel version. Each feature is detected by trying it;
// a kernel without it skips, naming the feature and the kernel.

// mmapable is BPF_F_MMAPABLE from <linux/bpf.h>, which arenas require.
const mmapable = 1 << 10

func TestKernelFeatures(t *testing.T) {
	page := uint32(os.Getpagesize())
	for _, tt := range []struct {
		name  string // the kernel's name for the feature
		since string // the release that added it, for the skip message
		spec  ebpf.MapSpec
	}{
		{"BPF_MAP_TYPE_RINGBUF", "5.8", ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: page}},
		{"BPF_MAP_TYPE_USER_RINGBUF", "6.1", ebpf.MapSpec{Type: ebpf.UserRingbuf, MaxEntries: page}},
		{"BPF_MAP_TYPE_ARENA", "6.9", ebpf.MapSpec{Type: ebpf.Arena, MaxEntries: 1, Flags: mmapable}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ebpf.NewMap(&tt.spec)
			if err != nil {
				skipIfMissing(t, err, tt.spec.Type, tt.name, tt.since)
				t.Fatalf("create %s: %v", tt.name, err)
			}
			defer m.Close()
			info, err := m.Info()
			if err != nil {
				t.Fatalf("map info: %v", err)
			}
			if info.Type != tt.spec.Type {
				t.Errorf("map type is %v, want %v", info.Type, tt.spec.Type)
			}
		})
	}
}

// skipIfMissing skips when the kernel lacks the map type (asked of
// cilium/ebpf's feature probe, so a mistake in the spec still fails) or
// the process may not use BPF; other errors are left to the caller.
func skipIfMissing(t *testing.T, err error, mt ebpf.MapType, feature, since string) {
	t.Helper()
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("no permission to create BPF maps on kernel %s (needs root or CAP_BPF): %v", kernelRelease(t), err)
	}
	if ferr := features.HaveMapType(mt); errors.Is(ferr, ebpf.ErrNotSupported) {
		t.Skipf("kernel %s lacks %s (added in Linux %s): %v", kernelRelease(t), feature, since, ferr)
	}
}

func kernelRelease(t *testing.T) string {
	t.Helper()
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// BenchmarkRingbufCreate gives the benchmark smoke run something to run
// on every kernel; it is not a performance measurement.
func BenchmarkRingbufCreate(b *testing.B) {
	spec := ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(os.Getpagesize())}
	for b.Loop() {
		m, err := ebpf.NewMap(&spec)
		if err != nil {
			b.Skipf("cannot create BPF_MAP_TYPE_RINGBUF: %v", err)
		}
		m.Close()
	}
}
