package vmtest

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

func TestProbeFirmware(t *testing.T) {
	fw := ProbeFirmware()
	if len(fw) != 64<<10 {
		t.Fatalf("firmware is %d bytes; QEMU wants a multiple of 64 KiB", len(fw))
	}
	want := []byte{0xb0, wire.ExitPass, 0xe6, wire.DebugExitPort, 0xf4}
	if got := fw[0xfff0 : 0xfff0+len(want)]; !bytes.Equal(got, want) {
		t.Errorf("reset vector holds % x, want % x", got, want)
	}
}

func TestChooseAccelAsGiven(t *testing.T) {
	for _, tt := range []struct{ want, got string }{
		{AccelTCG, AccelTCG},
		{AccelKVM, AccelKVM},
		{"hvf", AccelTCG},
	} {
		if got, reason := ChooseAccel(context.Background(), "/nonexistent/qemu", tt.want, t.TempDir()); got != tt.got {
			t.Errorf("ChooseAccel(%q) = %q (%s), want %q", tt.want, got, reason, tt.got)
		}
	}
}

func requireQEMU(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(QEMU); err != nil {
		t.Skipf("%s not installed (Debian package qemu-system-x86): %v", QEMU, err)
	}
}

// The probe firmware must really reach the debug-exit port; TCG runs it
// anywhere QEMU is installed.
func TestProbeUnderTCG(t *testing.T) {
	requireQEMU(t)
	if err := probe(context.Background(), QEMU, AccelTCG, t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

func TestVMArgs(t *testing.T) {
	vm := VM{Name: "6.1", Accel: AccelTCG, Kernel: "/k/vmlinuz", Initrd: "/i.cpio"}
	args := vm.Args()
	has := func(flag, value string) bool {
		t.Helper()
		for i := 0; i+1 < len(args); i++ {
			if args[i] == flag && args[i+1] == value {
				return true
			}
		}
		return false
	}
	for _, fv := range [][2]string{
		{"-accel", "tcg"}, {"-cpu", "max"}, {"-machine", "pc"}, {"-smp", "1"}, {"-m", "1G"},
		{"-kernel", "/k/vmlinuz"}, {"-initrd", "/i.cpio"}, {"-serial", "chardev:console"},
		{"-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"},
		{"-append", "console=ttyS0 panic=-1 oops=panic random.trust_cpu=on vmtest.kernel=6.1"},
	} {
		if !has(fv[0], fv[1]) {
			t.Errorf("args lack %s %s: %q", fv[0], fv[1], args)
		}
	}
	vm.Accel = AccelKVM
	args = vm.Args()
	if !has("-cpu", "host") {
		t.Errorf("KVM args lack -cpu host: %q", args)
	}
}
