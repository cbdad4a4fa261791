//go:build linux

// Package sockfilterbench runs a UDP server on [::1] against clients sending as
// fast as they can: one good client whose datagrams carry a payload (a
// sequence number first, when there is room) and bad clients sending
// empty datagrams. It measures what the server gets, for benchmarks of
// filtering unwanted packets in the kernel before they reach the socket.
//
// The server and every client each hold an OS thread of their own, with
// enough GOMAXPROCS that none waits for the Go scheduler: the kernel
// shares the CPUs among them, as it would among processes.
package sockfilterbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// skMeminfoDrops is the index of the drop count in the array
// getsockopt(SO_MEMINFO) fills (SK_MEMINFO_DROPS, include/uapi/linux/sock_diag.h).
const (
	skMeminfoDrops = 8
	skMeminfoVars  = 9
)

// SocketDrops returns how many datagrams the kernel dropped on their way
// into the socket fd: those a socket filter refused and those that found
// the receive buffer full (the socket's sk_drops).
func SocketDrops(fd int) (uint32, error) {
	var info [skMeminfoVars]uint32
	size := uint32(unsafe.Sizeof(info))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_MEMINFO,
		uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&size)), 0)
	if errno != 0 {
		return 0, fmt.Errorf("sockfilterbench: getsockopt(SO_MEMINFO): %w", errno)
	}
	if size <= skMeminfoDrops*4 {
		return 0, fmt.Errorf("sockfilterbench: SO_MEMINFO returned %d bytes, no drop count", size)
	}
	return info[skMeminfoDrops], nil
}

// BacklogDrops returns how many packets the kernel has dropped because a
// CPU's input backlog was full: the second column of
// /proc/net/softnet_stat (net/core/net-procfs.c), summed over CPUs.
func BacklogDrops() (uint64, error) {
	stat, err := os.ReadFile("/proc/net/softnet_stat")
	if err != nil {
		return 0, fmt.Errorf("sockfilterbench: %w", err)
	}
	var total uint64
	for _, line := range strings.Split(strings.TrimSpace(string(stat)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return 0, fmt.Errorf("sockfilterbench: softnet_stat line %q", line)
		}
		dropped, err := strconv.ParseUint(fields[1], 16, 32)
		if err != nil {
			return 0, fmt.Errorf("sockfilterbench: softnet_stat: %w", err)
		}
		total += dropped
	}
	return total, nil
}

// Listen opens a blocking UDP socket bound to [::1] on an ephemeral port
// and returns it with its port. Reads on it give up after timeout with
// EAGAIN, so a reader can notice it should stop.
func Listen(timeout time.Duration) (fd, port int, err error) {
	fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("sockfilterbench: socket: %w", err)
	}
	defer func() {
		if err != nil {
			unix.Close(fd)
		}
	}()
	if err := unix.Bind(fd, &unix.SockaddrInet6{Addr: [16]byte{15: 1}}); err != nil {
		return -1, 0, fmt.Errorf("sockfilterbench: bind [::1]:0: %w", err)
	}
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return -1, 0, fmt.Errorf("sockfilterbench: SO_RCVTIMEO: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return -1, 0, fmt.Errorf("sockfilterbench: getsockname: %w", err)
	}
	return fd, sa.(*unix.SockaddrInet6).Port, nil
}

// Dial opens a UDP socket connected to [::1]:port.
func Dial(port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("sockfilterbench: socket: %w", err)
	}
	if err := unix.Connect(fd, &unix.SockaddrInet6{Addr: [16]byte{15: 1}, Port: port}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("sockfilterbench: connect [::1]:%d: %w", port, err)
	}
	return fd, nil
}

// AttachFilter attaches a socket filter program (SO_ATTACH_BPF) to fd.
func AttachFilter(fd, progFD int) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ATTACH_BPF, progFD); err != nil {
		return fmt.Errorf("sockfilterbench: SO_ATTACH_BPF: %w", err)
	}
	return nil
}
