package vmtest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// recordedKVMError is QEMU's stderr when a Debian 5.10 cloud kernel
// stopped early in boot under KVM on an Intel Xeon host: a KVM internal
// error (emulation failure on a lock cmpxchg16b), with QEMU left running
// and the guest paused.
func recordedKVMError(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/qemu-kvm-internal-error.log")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestKVMInternalError(t *testing.T) {
	for _, tt := range []struct {
		name, stderr, want string
	}{
		{"recorded", recordedKVMError(t), "KVM internal error. Suberror: 1 (emulation failure)"},
		{"no reason line", "KVM internal error. Suberror: 3\nextra data[0]: 0x1\nRAX=0 RBX=0\n", "KVM internal error. Suberror: 3"},
		{"none", "qemu-system-x86_64: terminating on signal 15\n", ""},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := KVMInternalError(tt.stderr); got != tt.want {
				t.Errorf("KVMInternalError = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAccelPolicyStart(t *testing.T) {
	noKVM := errors.New("open /dev/kvm: no such file or directory")
	for _, tt := range []struct {
		want      string
		kvmDevice error
		accel     string
		trial     bool
		why       string
	}{
		{AccelTCG, nil, AccelTCG, false, "asked for with -accel tcg"},
		{AccelKVM, noKVM, AccelKVM, false, "asked for with -accel kvm"},
		{AccelAuto, nil, AccelKVM, true, "trial"},
		{"", nil, AccelKVM, true, "trial"},
		{AccelAuto, noKVM, AccelTCG, false, "no usable /dev/kvm: open /dev/kvm"},
	} {
		p, err := newAccelPolicy(tt.want, func() error { return tt.kvmDevice })
		if err != nil {
			t.Fatalf("newAccelPolicy(%q): %v", tt.want, err)
		}
		accel, why, trial := p.next()
		if accel != tt.accel || trial != tt.trial || !strings.Contains(why, tt.why) {
			t.Errorf("newAccelPolicy(%q, %v) gives %s (%s), trial %v; want %s with %q, trial %v",
				tt.want, tt.kvmDevice, accel, why, trial, tt.accel, tt.why, tt.trial)
		}
		select {
		case <-p.probed:
			if tt.trial {
				t.Errorf("newAccelPolicy(%q): KVM's probe answered before any kernel ran", tt.want)
			}
		default:
			if !tt.trial {
				t.Errorf("newAccelPolicy(%q): kernels wait for a probe that never comes", tt.want)
			}
		}
	}
	if _, err := newAccelPolicy("hvf", func() error { return nil }); err == nil || !strings.Contains(err.Error(), `unknown accelerator "hvf"`) {
		t.Errorf("newAccelPolicy(hvf) = %v, want an unknown accelerator error", err)
	}
}

// Under auto, the first KVM failure moves the rest of the run to TCG and
// later failures change nothing; a forced KVM never falls over.
func TestAccelPolicyFailover(t *testing.T) {
	p, _ := newAccelPolicy(AccelAuto, func() error { return nil })
	p.booted("5.10")
	if accel, why, trial := p.next(); accel != AccelKVM || !trial || why != "KVM ran kernel 5.10 earlier in this run" {
		t.Errorf("after a boot: %s (%s), trial %v", accel, why, trial)
	}
	p.kvmFailed("6.1", "guest silent for 30s")
	want := "KVM failed on kernel 6.1 earlier in this run (guest silent for 30s)"
	if accel, why, trial := p.next(); accel != AccelTCG || trial || why != want {
		t.Errorf("after a failure: %s (%s), trial %v", accel, why, trial)
	}
	// A kernel that was on trial beside 6.1 fails later: the reason
	// stays the first failure.
	p.kvmFailed("6.12", "again")
	if _, why, _ := p.next(); why != want {
		t.Errorf("a second failure changed the reason to %q", why)
	}

	forced, _ := newAccelPolicy(AccelKVM, func() error { return nil })
	forced.kvmFailed("5.10", "KVM internal error")
	if accel, _, trial := forced.next(); accel != AccelKVM || trial {
		t.Errorf("-accel kvm moved to %s, trial %v", accel, trial)
	}
}

func TestKVMFailure(t *testing.T) {
	booted := &Console{Booted: true}
	silentBoot := &Console{Last: "[    0.000000] Linux version 5.10.0-46-cloud-amd64"}
	for _, tt := range []struct {
		name string
		boot Boot
		con  *Console
		want string // a part of the failure; "" for none
	}{
		{"recorded KVM internal error", Boot{Status: -1, Signal: "signal: killed", KVMError: KVMInternalError(recordedKVMError(t))}, silentBoot,
			"KVM internal error. Suberror: 1 (emulation failure)"},
		{"silent before boot", Boot{Status: -1, Silent: true, Watchdog: 30 * time.Second}, silentBoot, "guest silent for 30s"},
		{"not booted by the deadline", Boot{Status: -1, NoBoot: true, BootDeadline: 30 * time.Second}, silentBoot, "the init did not start within 30s"},
		{"silent after boot", Boot{Status: -1, Silent: true, Watchdog: 30 * time.Second}, booted, "guest silent for 30s"},
		{"QEMU aborted setting up the vCPU", Boot{Status: -1, Signal: "signal: aborted"}, &Console{}, "QEMU signal: aborted before the guest booted"},
		{"QEMU error before boot", Boot{Status: 1}, &Console{}, "QEMU exited with status 1"},
		{"host timeout before boot", Boot{Status: -1, TimedOut: true}, silentBoot, "no boot within the host timeout"},
		{"host timeout after boot", Boot{Status: -1, TimedOut: true}, booted, ""},
		{"kernel panic", Boot{Status: 0}, &Console{Panic: "Kernel panic - not syncing: Fatal exception"}, ""},
		{"tests failed", Boot{Status: 35}, booted, ""},
		{"passed", Boot{Status: 33}, booted, ""},
		{"interrupted", Boot{Status: -1, Signal: "signal: killed", Interrupted: true}, &Console{}, ""},
		{"QEMU not started", Boot{Status: -1, StartErr: exec.ErrNotFound}, &Console{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := kvmFailure(tt.boot, tt.con)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("kvmFailure = %q, want %q", got, tt.want)
			}
		})
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
		{"-accel", "tcg,thread=single"}, {"-cpu", "max"}, {"-machine", "pc"}, {"-smp", "1"}, {"-m", "1G"},
		{"-kernel", "/k/vmlinuz"}, {"-initrd", "/i.cpio"}, {"-serial", "chardev:console"},
		{"-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"},
		{"-append", "console=ttyS0 panic=-1 oops=panic random.trust_cpu=on tsc=reliable no_timer_check vmtest.kernel=6.1"},
	} {
		if !has(fv[0], fv[1]) {
			t.Errorf("args lack %s %s: %q", fv[0], fv[1], args)
		}
	}
	if has("-serial", "chardev:heartbeat") {
		t.Errorf("args have a heartbeat port nobody asked for: %q", args)
	}
	vm.Accel, vm.Heartbeat = AccelKVM, "/tmp/hb"
	args = vm.Args()
	if !has("-cpu", "host") || !has("-accel", "kvm") {
		t.Errorf("KVM args lack -accel kvm or -cpu host: %q", args)
	}
	// The heartbeat must be the second -serial, the guest's ttyS1.
	if !has("-chardev", "file,id=heartbeat,path=/tmp/hb") || !strings.HasSuffix(strings.Join(args, " "), "-serial chardev:console -device isa-debug-exit,iobase=0xf4,iosize=0x04 -chardev file,id=heartbeat,path=/tmp/hb -serial chardev:heartbeat") {
		t.Errorf("heartbeat args wrong: %q", args)
	}
}

func requireQEMU(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(QEMU); err != nil {
		t.Skipf("%s not installed (Debian package qemu-system-x86): %v", QEMU, err)
	}
}
