package ulong

import (
	"errors"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAskKernel asks this host's kernel, in the process's personality and
// under linux32, where uname names a 32-bit machine on a 64-bit kernel:
// the answer is the same. A 64-bit process knows the truth to compare.
func TestAskKernel(t *testing.T) {
	is32, err := askKernel()
	skipIfNothingTells(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if Process32 && (is32 != Is32 || Err() != nil) {
		t.Fatalf("asked again: %v, at init: %v (%v)", is32, Is32, Err())
	}
	if !Process32 && is32 {
		t.Fatal("a 64-bit process's kernel has a 32-bit unsigned long")
	}
	if start, err := kallsymsStart(); err == nil && !Process32 && kallsymsWord(start) != 8 {
		t.Fatalf("/proc/kallsyms starts %q on a 64-bit kernel", start)
	}

	machine, linux32Is32, err := underLinux32(t)
	skipIfNothingTells(t, err)
	if err != nil {
		t.Fatalf("under linux32 (uname says %q): %v", machine, err)
	}
	if linux32Is32 != is32 {
		t.Fatalf("under linux32 (uname says %q): Is32 %v, want %v", machine, linux32Is32, is32)
	}
	t.Logf("Is32 %v; uname under linux32 says %q", is32, machine)
}

// underLinux32 asks the kernel as askKernel does from a thread whose
// personality is PER_LINUX32: the personality is a thread's, inherited by
// the threads and programs it starts. It returns uname's machine there.
func underLinux32(t *testing.T) (string, bool, error) {
	t.Helper()
	runtime.LockOSThread()
	old, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	if errno != 0 {
		runtime.UnlockOSThread()
		t.Fatalf("personality: %v", errno)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, old&^perMask|perLinux32, 0, 0); errno != 0 {
		runtime.UnlockOSThread()
		// arm64 without 32-bit EL0 refuses it (arch/arm64/kernel/sys.c)
		t.Skipf("personality(PER_LINUX32): %v", errno)
	}
	var u unix.Utsname
	unix.Uname(&u)
	is32, err := askKernel()
	if _, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, old, 0, 0); errno != 0 {
		// The thread stays locked, so that it ends with the goroutine.
		t.Fatalf("restore personality %#x: %v", old, errno)
	}
	runtime.UnlockOSThread()
	return unix.ByteSliceToString(u.Machine[:]), is32, err
}

// skipIfNothingTells skips where askKernel could not tell, as designed:
// under linux32 with /proc/kallsyms unreadable (a container may mask it).
func skipIfNothingTells(t *testing.T, err error) {
	t.Helper()
	if _, readErr := kallsymsStart(); readErr != nil && errors.Is(err, ErrWordSize) {
		t.Skipf("nothing tells the kernel's word size here: %v", err)
	}
}
