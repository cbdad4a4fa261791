package vmtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// QEMU is the emulator binary, from Debian's qemu-system-x86 package.
const QEMU = "qemu-system-x86_64"

// Memory is each VM's memory. Benchmarks inside the VM are told to use
// small rings (see GuestEnv), so 1G is plenty.
const Memory = "1G"

// KernelArgs are the kernel command line options every VM gets.
var KernelArgs = []string{
	"console=ttyS0",
	// panic=-1 reboots at once on a panic, and -no-reboot turns that
	// reboot into QEMU exiting with status 0: a panic ends the VM quickly
	// and unmistakably instead of hanging until the host timeout.
	"panic=-1",
	// An oops in a test's system call becomes a panic too, rather than a
	// killed test process that looks like an ordinary failure.
	"oops=panic",
	// Kernels before 5.18 can take minutes to seed their random pool
	// under emulation, blocking getrandom(2) and so Go's crypto/rand.
	// -cpu max gives TCG the RDRAND instruction; this trusts it.
	"random.trust_cpu=on",
	// The guest's clocks are QEMU's, and the host may deschedule a vCPU
	// for as long as it likes, under TCG above all; two boot-time checks
	// that time one CPU against another then fail, or never end.
	//
	// tsc=reliable takes the TSC off the clocksource watchdog
	// (Documentation/admin-guide/kernel-parameters.txt: it "disables
	// clocksource verification at runtime"). 7.x's rewritten watchdog
	// (kernel/time/clocksource.c, watchdog_check_skew) has the boot CPU
	// wait with interrupts off for another CPU to answer, bounded by
	// ktime_get_raw_fast_ns; early in boot that clock is jiffies, which
	// stop when every CPU has interrupts off. A 7.x guest with two CPUs
	// hung so, for good, right after "smp: Brought up 1 node, 2 CPUs":
	// CPU 0 in watchdog_check_skew, CPU 1 in stop_machine_yield waiting
	// for CPU 0, both with interrupts off (QEMU's info registers, symbols
	// from the same kernel's /proc/kallsyms). Under TCG the TSC is QEMU's
	// virtual clock, the same on every vCPU: nothing to watch.
	"tsc=reliable",
	// no_timer_check skips the IO-APIC timer test (check_timer in
	// arch/x86/kernel/apic/io_apic.c), which counts ticks over a busy
	// wait: a starved vCPU misses them and the kernel panics with
	// "IO-APIC + timer doesn't work!" (2 of 9 TCG boots of 7.x, three VMs
	// and two busy loops on one host CPU). QEMU's timer is wired; there
	// is nothing to test.
	"no_timer_check",
}

// VM is one boot of one kernel.
type VM struct {
	// Name is the matrix entry; the guest echoes it back.
	Name string
	// CPUs is the guest's CPU count (-smp); 0 is one.
	CPUs int
	// QEMU is the emulator binary, normally QEMU.
	QEMU string
	// Accel is AccelKVM or AccelTCG (ChooseAccel settles AccelAuto).
	Accel string
	// Kernel is the vmlinuz to boot and Initrd the archive from
	// PackInitramfs.
	Kernel, Initrd string
	// Timeout bounds the whole VM run from the host: go test's own
	// -test.timeout does not stop a hung kernel, nor (in the guest)
	// benchmarks that never finish.
	Timeout time.Duration
	// Watchdog stops the VM once neither the console nor the heartbeat
	// has shown a sign of life for that long; zero turns it off.
	Watchdog time.Duration
	// BootDeadline stops the VM when the init's BOOTED marker has not
	// come by then; zero turns it off. A KVM guest boots in seconds, so
	// a KVM trial gets one; TCG boots too slowly on a busy host for a
	// tight one.
	BootDeadline time.Duration
	// Heartbeat is the host file behind the guest's second serial port
	// (wire.HeartbeatDevice); empty gives the guest no such port.
	Heartbeat string
	// Dir is QEMU's working folder, where a QEMU that aborts leaves its
	// core file; empty means the caller's.
	Dir string
	// Console receives the raw serial output; Stderr QEMU's own messages.
	Console io.Writer
	Stderr  io.Writer
}

// Args is QEMU's command line for the VM.
func (vm VM) Args() []string {
	cmdline := append(append([]string{}, KernelArgs...), wire.KernelParam+"="+vm.Name)
	args := []string{
		"-accel", accelOption(vm.Accel),
		"-cpu", cpuModel(vm.Accel),
		// pc with one CPU unless the kernel asks for more: -smp 2 crashed
		// 6.12 in 3 of 10 boots under TCG and -M microvm hung, when this
		// runner was written; 7.x boots and passes with two.
		"-machine", "pc",
		"-smp", strconv.Itoa(max(vm.CPUs, 1)),
		"-m", Memory,
		"-nodefaults",
		"-display", "none",
		"-no-reboot",
		"-kernel", vm.Kernel,
		"-initrd", vm.Initrd,
		"-append", strings.Join(cmdline, " "),
		// signal=off: a ^C byte on stdin is not QEMU's business.
		"-chardev", "stdio,id=console,signal=off",
		"-serial", "chardev:console",
		"-device", fmt.Sprintf("isa-debug-exit,iobase=%#x,iosize=0x04", wire.DebugExitPort),
	}
	if vm.Heartbeat != "" {
		// The second -serial is the guest's ttyS1.
		args = append(args, "-chardev", "file,id=heartbeat,path="+vm.Heartbeat, "-serial", "chardev:heartbeat")
	}
	return args
}

// Boot is what the host saw of one VM run.
type Boot struct {
	// Status is QEMU's exit status, -1 when it did not exit by itself.
	Status int
	// Signal names the signal that ended QEMU, if one did.
	Signal string
	// TimedOut says the host killed the VM at Timeout.
	TimedOut bool
	// Silent says the watchdog stopped the VM: no console output and no
	// heartbeat for Watchdog.
	Silent bool
	// NoBoot says the VM was stopped at its BootDeadline, not booted.
	NoBoot bool
	// BootDeadline is the VM's boot deadline, for reports.
	BootDeadline time.Duration
	// Watchdog is the VM's watchdog, for reports.
	Watchdog time.Duration
	// KVMError is QEMU's "KVM internal error" report in brief; the VM is
	// stopped as soon as QEMU prints one, since the guest never resumes.
	KVMError string
	// LongestSilence is the longest the guest went without a sign of
	// life, the measure to set the watchdog by, and SilenceEnded when
	// that silence ended (from the start of the run).
	LongestSilence, SilenceEnded time.Duration
	// Interrupted says the run was cancelled from the host (^C).
	Interrupted bool
	// StartErr is set when QEMU could not be started at all.
	StartErr error
	// Elapsed is the whole run; Booted the time until the init's BOOTED
	// marker, zero when it never came.
	Elapsed, Booted time.Duration
	// Lines is the console output, carriage returns removed.
	Lines []string
}

// The reasons Run stops a VM early.
var (
	errSilent   = errors.New("watchdog: guest silent")
	errNoBoot   = errors.New("no boot marker by the boot deadline")
	errKVMError = errors.New("KVM internal error")
)

// Run boots the VM and waits for it to end, stopping it at Timeout, when
// the watchdog finds it silent, or when QEMU reports a KVM internal error.
func (vm VM) Run(ctx context.Context) Boot {
	tctx, cancel := context.WithTimeout(ctx, vm.Timeout)
	defer cancel()
	sctx, stop := context.WithCancelCause(tctx)
	defer stop(nil)
	cmd := exec.CommandContext(sctx, vm.QEMU, vm.Args()...)
	cmd.Dir = vm.Dir
	cmd.Stdin = nil // /dev/null: nothing to type into the guest
	kvmWatch := &kvmErrorWatch{found: func() {
		// QEMU prints its register dump right after the error line;
		// a moment's grace keeps it whole in qemu.log.
		time.AfterFunc(300*time.Millisecond, func() { stop(errKVMError) })
	}}
	cmd.Stderr = kvmWatch
	if vm.Stderr != nil {
		cmd.Stderr = io.MultiWriter(vm.Stderr, kvmWatch)
	}
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Boot{Status: -1, StartErr: err}
	}
	if vm.Heartbeat != "" {
		// A beat left from an earlier VM would count as a sign of life.
		os.Remove(vm.Heartbeat)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		// ^C just before the start: exec refuses to start, and the kernel
		// is interrupted like one whose QEMU had started.
		if ctx.Err() != nil {
			return Boot{Status: -1, Interrupted: true}
		}
		return Boot{Status: -1, StartErr: err}
	}
	life := newLifeSigns(start, vm.Heartbeat)
	var (
		b  Boot
		wg sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.Lines, b.Booted = readConsole(life.watch(out), vm.Console, start, life.markBooted)
	}()
	watchdogDone := make(chan struct{})
	if vm.Watchdog > 0 || vm.BootDeadline > 0 {
		go life.guard(sctx, vm.Watchdog, vm.BootDeadline, stop, watchdogDone)
	} else {
		close(watchdogDone)
	}
	wg.Wait() // the pipe closes when QEMU exits or is killed
	werr := cmd.Wait()
	stop(nil)
	<-watchdogDone
	b.Elapsed = time.Since(start)
	b.Status = cmd.ProcessState.ExitCode()
	b.Watchdog, b.BootDeadline = vm.Watchdog, vm.BootDeadline
	b.LongestSilence, b.SilenceEnded = life.longestSilence()
	b.KVMError = KVMInternalError(kvmWatch.text())
	var ee *exec.ExitError
	if errors.As(werr, &ee) && !ee.Exited() {
		b.Signal = ee.String()
	}
	switch {
	case ctx.Err() != nil:
		b.Interrupted = true
	case tctx.Err() == context.DeadlineExceeded:
		b.TimedOut = true
	case context.Cause(sctx) == errSilent:
		b.Silent = true
	case context.Cause(sctx) == errNoBoot:
		b.NoBoot = true
	}
	return b
}

// readConsole copies the console to w line by line and notes when the
// boot marker went past, calling onBooted then.
func readConsole(r io.Reader, w io.Writer, start time.Time, onBooted func()) ([]string, time.Duration) {
	var (
		lines  []string
		booted time.Duration
	)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if w != nil {
				io.WriteString(w, line)
			}
			line = strings.TrimRight(line, "\r\n")
			line = strings.ReplaceAll(line, "\r", "")
			if m, ok := wire.ParseMarker(line); ok && m.Kind == wire.KindBooted && booted == 0 {
				booted = time.Since(start)
				onBooted()
			}
			lines = append(lines, line)
		}
		if err != nil {
			return lines, booted
		}
	}
}
