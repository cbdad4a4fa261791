//go:build linux

// Command vminit is the init (PID 1) of the test VMs that `make test-vms`
// boots. It mounts the kernel file systems the tests need, runs every step
// of the plan the host packed into the initramfs (wire.PlanPath) as a
// separate process, prints a marker line per step on the serial console,
// and powers the VM off through QEMU's isa-debug-exit port with a code
// that sums up the run.
//
// It must be built static (CGO_ENABLED=0): the initramfs has no libc.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

func main() {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "vminit: this is the init of a test VM; it only runs as PID 1")
		os.Exit(2)
	}
	// ioperm is per thread: keep main on one thread so the port write at
	// the end happens where the permission was granted.
	runtime.LockOSThread()

	con, err := setupConsole()
	if err != nil {
		// Without a console nobody can read an explanation; the exit code
		// alone tells the host the init failed.
		powerOff(nil, wire.ExitInitError)
	}
	say := func(kind string, kv ...string) {
		fmt.Fprintf(con, "\n%s\n", wire.Format(kind, kv...))
	}

	if err := startHeartbeat(); err != nil {
		// The host's watchdog then has only the console to go by.
		say(wire.KindNote, wire.FieldMsg, "heartbeat on "+wire.HeartbeatDevice+": "+err.Error())
	}
	if err := mountAll(say); err != nil {
		say(wire.KindError, wire.FieldMsg, err.Error())
		powerOff(con, wire.ExitInitError)
	}
	if err := raiseMemlock(); err != nil {
		// Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK; the tests
		// may still pass with the default, so this is worth a note only.
		say(wire.KindNote, wire.FieldMsg, "raise RLIMIT_MEMLOCK: "+err.Error())
	}
	if err := loopbackUp(); err != nil {
		// Only the tests that use sockets need it; they fail and say so.
		say(wire.KindNote, wire.FieldMsg, err.Error())
	}

	plan, err := wire.ReadPlan(wire.PlanPath)
	if err != nil {
		say(wire.KindError, wire.FieldMsg, err.Error())
		powerOff(con, wire.ExitInitError)
	}
	say(wire.KindBooted, wire.FieldKernel, cmdlineParam(wire.KernelParam), wire.FieldRelease, release())

	code := wire.ExitPass
	for _, st := range plan.Steps {
		say(wire.KindBegin, wire.FieldPkg, st.Package, wire.FieldPhase, string(st.Phase))
		start := time.Now()
		exit, why := runStep(con, plan.Env, st)
		kv := []string{
			wire.FieldPkg, st.Package,
			wire.FieldPhase, string(st.Phase),
			wire.FieldExit, fmt.Sprint(exit),
			wire.FieldSeconds, fmt.Sprintf("%.1f", time.Since(start).Seconds()),
		}
		if why != "" {
			kv = append(kv, wire.FieldWhy, why)
		}
		say(wire.KindResult, kv...)
		if exit != 0 {
			code = wire.ExitFail
		}
	}
	status := "pass"
	if code != wire.ExitPass {
		status = "fail"
	}
	say(wire.KindDone, wire.FieldStatus, status)
	powerOff(con, code)
}

// release is the running kernel's release string, as uname -r prints it.
func release() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// cmdlineParam returns the value of name=value on the kernel command line.
func cmdlineParam(name string) string {
	b, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return ""
	}
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

// raiseMemlock lifts RLIMIT_MEMLOCK for the init and so for every step.
func raiseMemlock() error {
	inf := syscall.Rlimit{Cur: ^uint64(0), Max: ^uint64(0)}
	return syscall.Setrlimit(8 /* RLIMIT_MEMLOCK, asm-generic/resource.h */, &inf)
}
