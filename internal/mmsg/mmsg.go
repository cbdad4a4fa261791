//go:build linux

// Package mmsg moves batches of datagrams with one system call each:
// sendmmsg(2) and recvmmsg(2) over a vector of message headers. The
// socket filter benchmark's clients and server (internal/sockfilterbench) and
// the XDP rig's flood (internal/xdpflood) send through it.
//
//	v := mmsg.Repeat(32, payload) // 32 datagrams, the same bytes each
//	n, errno := v.Send(fd, 32)    // fd a connected UDP socket
package mmsg

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Vector is n datagrams, each a message header pointing at one buffer.
type Vector struct {
	hdrs []mmsghdr
	iovs []unix.Iovec
	// Bufs are the datagrams' buffers, one a header: filled before Send,
	// read after Recv (the first Received(i) bytes of Bufs[i]).
	Bufs [][]byte
}

// New returns n datagrams with a buffer of size bytes each.
func New(n, size int) *Vector {
	backing := make([]byte, n*size)
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = backing[i*size : (i+1)*size : (i+1)*size]
	}
	return newVector(bufs)
}

// Repeat returns n datagrams that all send the bytes of payload: a flood
// that measures transport, not content, fills one buffer once.
func Repeat(n int, payload []byte) *Vector {
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = payload
	}
	return newVector(bufs)
}

func newVector(bufs [][]byte) *Vector {
	v := &Vector{hdrs: make([]mmsghdr, len(bufs)), iovs: make([]unix.Iovec, len(bufs)), Bufs: bufs}
	for i, b := range bufs {
		if len(b) > 0 {
			v.iovs[i].Base = &b[0]
		}
		v.iovs[i].SetLen(len(b))
		v.hdrs[i].Hdr.Iov = &v.iovs[i]
		v.hdrs[i].Hdr.SetIovlen(1)
	}
	return v
}

// Len is the number of datagrams in the vector.
func (v *Vector) Len() int { return len(v.hdrs) }

// Send sends the first n datagrams on the connected socket fd with one
// sendmmsg and returns how many the kernel took.
func (v *Vector) Send(fd, n int) (int, unix.Errno) {
	return v.call(unix.SYS_SENDMMSG, fd, n, 0)
}

// Recv receives up to n datagrams from fd with one recvmmsg and returns
// how many arrived; flags as recvmmsg's (MSG_WAITFORONE).
func (v *Vector) Recv(fd, n, flags int) (int, unix.Errno) {
	return v.call(unix.SYS_RECVMMSG, fd, n, flags)
}

// Received is the size of datagram i of the last Recv.
func (v *Vector) Received(i int) int { return int(v.hdrs[i].Len) }

// call runs sendmmsg or recvmmsg (trap) on the first n datagrams. The
// raw system call, not a wrapper: x/sys/unix has none for either.
func (v *Vector) call(trap uintptr, fd, n, flags int) (int, unix.Errno) {
	r, _, errno := unix.Syscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&v.hdrs[0])), uintptr(n), uintptr(flags), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), 0
}

// mmsghdr is the kernel's struct mmsghdr (include/linux/socket.h): a
// msghdr and the bytes received. Go pads it as C does, to the msghdr's
// alignment. Our own, so that go.mod need not require the golang.org/x/sys
// that added unix.Mmsghdr (v0.49.0, which needs Go 1.26).
type mmsghdr struct {
	Hdr unix.Msghdr
	Len uint32
}
