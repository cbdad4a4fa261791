//go:build linux

package main

import (
	"os"
	"syscall"
	"time"
)

// setupConsole mounts devtmpfs on /dev and makes /dev/console the init's
// stdin, stdout and stderr. The initramfs carries no device nodes (it is
// packed without root rights), so the kernel found no console to give the
// init and the init opens one itself.
func setupConsole() (*os.File, error) {
	if err := mountOne("devtmpfs", "/dev", "devtmpfs"); err != nil {
		return nil, err
	}
	con, err := os.OpenFile("/dev/console", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	for fd := 0; fd <= 2; fd++ {
		if err := syscall.Dup3(int(con.Fd()), fd, 0); err != nil {
			return nil, err
		}
	}
	return con, nil
}

// tcsbrk is TCSBRK from <asm-generic/ioctls.h>. With a non-zero argument
// it sends no break but, like tcdrain(3), returns only once the tty's
// output, UART FIFO included, has gone out (drivers/tty/tty_ioctl.c calls
// tty_wait_until_sent for it).
const tcsbrk = 0x5409

// drain waits until everything written to the console has left the
// serial port, so the last lines are not lost when the VM powers off.
func drain(con *os.File) {
	if con == nil {
		return
	}
	syscall.Syscall(syscall.SYS_IOCTL, con.Fd(), tcsbrk, 1)
	// QEMU's serial backend writes to the host asynchronously; a short
	// pause covers the bytes still on their way out of the emulated UART.
	time.Sleep(200 * time.Millisecond)
}
