package ulong

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Is32 reports whether the kernel's unsigned long is 32 bits wide. A 64-bit
// process knows it is not; a 32-bit one asks the kernel once, at init. When
// nothing tells, Is32 is false and [Err] says why.
var Is32, errWord = func() (bool, error) {
	if !Process32 {
		return false, nil
	}
	return askKernel()
}()

// Err returns nil if Is32 is what the kernel said, else an error wrapping
// [ErrWordSize]: a reader that maps a kernel ring returns it rather than
// guess.
func Err() error { return errWord }

func askKernel() (bool, error) {
	kallsyms, readErr := kallsymsStart()
	// personality(0xffffffff) returns it and changes nothing
	// (kernel/exec_domain.c).
	persona, _, _ := unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	var machine string
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		machine = unix.ByteSliceToString(u.Machine[:])
	}
	is32, err := kernelIs32(kallsyms, uint32(persona), machine)
	if err != nil && readErr != nil {
		err = fmt.Errorf("%w (%v)", err, readErr)
	}
	return is32, err
}

func kallsymsStart() ([]byte, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 32)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return buf[:n], fmt.Errorf("read /proc/kallsyms: %w", err)
	}
	return buf[:n], nil
}
