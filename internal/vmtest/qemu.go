package vmtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
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
}

// VM is one boot of one kernel.
type VM struct {
	// Name is the matrix entry; the guest echoes it back.
	Name string
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
	// Console receives the raw serial output; Stderr QEMU's own messages.
	Console io.Writer
	Stderr  io.Writer
}

// Args is QEMU's command line for the VM.
func (vm VM) Args() []string {
	cmdline := append(append([]string{}, KernelArgs...), wire.KernelParam+"="+vm.Name)
	return []string{
		"-accel", vm.Accel,
		"-cpu", cpuModel(vm.Accel),
		// pc with one CPU: -smp 2 crashed 6.12 in 3 of 10 boots under TCG
		// and -M microvm hung, when this runner was written.
		"-machine", "pc",
		"-smp", "1",
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
}

// Boot is what the host saw of one VM run.
type Boot struct {
	// Status is QEMU's exit status, -1 when it did not exit by itself.
	Status int
	// Signal names the signal that ended QEMU, if one did.
	Signal string
	// TimedOut says the host killed the VM at Timeout.
	TimedOut bool
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

// Run boots the VM and waits for it to end.
func (vm VM) Run(ctx context.Context) Boot {
	tctx, cancel := context.WithTimeout(ctx, vm.Timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, vm.QEMU, vm.Args()...)
	cmd.Stdin = nil // /dev/null: nothing to type into the guest
	cmd.Stderr = vm.Stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Boot{Status: -1, StartErr: err}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Boot{Status: -1, StartErr: err}
	}
	var (
		b  Boot
		wg sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.Lines, b.Booted = readConsole(out, vm.Console, start)
	}()
	wg.Wait() // the pipe closes when QEMU exits or is killed
	werr := cmd.Wait()
	b.Elapsed = time.Since(start)
	b.Status = cmd.ProcessState.ExitCode()
	var ee *exec.ExitError
	if errors.As(werr, &ee) && !ee.Exited() {
		b.Signal = ee.String()
	}
	switch {
	case ctx.Err() != nil:
		b.Interrupted = true
	case tctx.Err() == context.DeadlineExceeded:
		b.TimedOut = true
	}
	return b
}

// readConsole copies the console to w line by line and notes when the
// boot marker went past.
func readConsole(r io.Reader, w io.Writer, start time.Time) ([]string, time.Duration) {
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
			}
			lines = append(lines, line)
		}
		if err != nil {
			return lines, booted
		}
	}
}
