//go:build linux

// Command test32 runs the readers' tests in a 32-bit process, where the
// kernel's unsigned long may be 32 bits or not (internal/ulong): it builds
// GOARCH=386 test binaries of the packages named (by default ringbuf, perf
// and internal/ulong) and runs each twice, plainly and under the linux32
// personality that 32-bit build containers run in (setarch i686), where a
// 64-bit kernel names a 32-bit machine to uname. It exits non-zero if a
// build or a run fails, and skips with its reason, exiting zero, where the
// kernel cannot run 386 programs. make test runs it:
//
//	go run ./internal/cmd/test32 [-go go] [-run regexp] [-v] [packages]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// execLinux32 is the argument with which test32 runs itself to start a
// test binary under the linux32 personality: the personality is set by a
// thread for itself and the programs it executes, which os/exec offers
// no way to do for a child.
const execLinux32 = "-exec-linux32"

// PER_LINUX32 in the personality's low byte, PER_MASK
// (include/uapi/linux/personality.h).
const (
	perLinux32 = 0x0008
	perMask    = 0x00ff
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == execLinux32 {
		err := execUnderLinux32(os.Args[2:])
		fmt.Fprintf(os.Stderr, "test32: %v\n", err)
		os.Exit(127)
	}
	goCmd := flag.String("go", "go", "the go command that builds the test binaries")
	run := flag.String("run", "", "run only the tests matching `regexp` (-test.run)")
	verbose := flag.Bool("v", false, "verbose test output (-test.v)")
	flag.Parse()
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./ringbuf/", "./perf/", "./internal/ulong/"}
	}
	testArgs := []string{"-test.count=1", "-test.timeout=10m"}
	if *run != "" {
		testArgs = append(testArgs, "-test.run="+*run)
	}
	if *verbose {
		testArgs = append(testArgs, "-test.v")
	}
	os.Exit(test32(*goCmd, pkgs, testArgs))
}

// execUnderLinux32 sets the linux32 personality, keeping its flags, and
// executes args in its place; it returns only on error.
func execUnderLinux32(args []string) error {
	runtime.LockOSThread() // the personality set is this thread's
	old, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	if errno != 0 {
		return fmt.Errorf("personality: %w", errno)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, old&^perMask|perLinux32, 0, 0); errno != 0 {
		return fmt.Errorf("personality(PER_LINUX32): %w", errno)
	}
	return fmt.Errorf("exec %s: %w", args[0], syscall.Exec(args[0], args, os.Environ()))
}

// test32 builds and runs the packages' 386 test binaries, and returns the
// exit code.
func test32(goCmd string, pkgs []string, testArgs []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "test32: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "test32-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "test32: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)

	list := exec.Command(goCmd, append([]string{"list", "-f", "{{.Dir}}"}, pkgs...)...)
	list.Stderr = os.Stderr
	out, err := list.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "test32: go list: %v\n", err)
		return 1
	}
	// Under linux32 only /proc/kallsyms tells a 32-bit process the
	// kernel's word size (internal/ulong); without it the readers refuse.
	kallsymsErr := kallsymsReadable()
	failed := 0
	for i, pkgDir := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name := filepath.Base(pkgDir)
		bin := filepath.Join(dir, fmt.Sprintf("%d-%s.test", i, name))
		build := exec.Command(goCmd, "test", "-c", "-o", bin, pkgDir)
		build.Env = append(os.Environ(), "GOARCH=386", "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Printf("test32: FAIL %s: build: %v\n", name, err)
			failed++
			continue
		}
		for _, how := range []struct {
			name string
			argv []string
		}{
			{"plain", append([]string{bin}, testArgs...)},
			{"linux32", append([]string{self, execLinux32, bin}, testArgs...)},
		} {
			if how.name == "linux32" && kallsymsErr != nil {
				fmt.Printf("test32: skipped %s, 386, linux32: nothing tells a 32-bit process there the kernel's word size (%v)\n", name, kallsymsErr)
				continue
			}
			start := time.Now()
			test := exec.Command(how.argv[0], how.argv[1:]...)
			test.Dir = pkgDir // as go test runs it: testdata is relative
			test.Stdout, test.Stderr = os.Stdout, os.Stderr
			err := test.Run()
			if errors.Is(err, syscall.ENOEXEC) {
				// A 64-bit x86 kernel built or booted without IA32
				// emulation, or another architecture's kernel.
				fmt.Printf("test32: skipped: this kernel cannot run 386 programs (%v): no IA32 emulation (CONFIG_IA32_EMULATION, ia32_emulation=)?\n", err)
				return 0
			}
			result := "ok  "
			if err != nil {
				result = "FAIL"
				failed++
			}
			fmt.Printf("test32: %s %s, 386, %s (%.1fs)\n", result, name, how.name, time.Since(start).Seconds())
		}
	}
	if failed > 0 {
		fmt.Printf("test32: %d of the 386 builds and runs failed\n", failed)
		return 1
	}
	return 0
}

// kallsymsReadable returns nil if /proc/kallsyms has something to read.
func kallsymsReadable() error {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Read(make([]byte, 1)); err != nil {
		return fmt.Errorf("read /proc/kallsyms: %w", err)
	}
	return nil
}
