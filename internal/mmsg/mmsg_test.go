//go:build linux

package mmsg

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSendRecv sends a batch over a loopback UDP socket pair and reads
// it back with one recvmmsg: sizes and bytes arrive as sent.
func TestSendRecv(t *testing.T) {
	rx, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rx)
	if err := unix.Bind(rx, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval(time.Second.Nanoseconds())
	if err := unix.SetsockoptTimeval(rx, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	addr, err := unix.Getsockname(rx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(tx)
	if err := unix.Connect(tx, addr); err != nil {
		t.Fatal(err)
	}

	payload := []byte("same bytes each time")
	out := Repeat(4, payload)
	if n, errno := out.Send(tx, out.Len()); errno != 0 || n != 4 {
		t.Fatalf("Send: %d, %v", n, errno)
	}
	in := New(8, 64)
	got := 0
	for got < 4 {
		n, errno := in.Recv(rx, in.Len(), unix.MSG_WAITFORONE)
		if errno != 0 {
			t.Fatalf("Recv after %d: %v", got, errno)
		}
		for i := range n {
			if size := in.Received(i); !bytes.Equal(in.Bufs[i][:size], payload) {
				t.Errorf("datagram %d: %q", got+i, in.Bufs[i][:size])
			}
		}
		got += n
	}
}

// TestEmpty checks that datagrams of no bytes build a valid vector: the
// socket filter benchmark's bad clients send those.
func TestEmpty(t *testing.T) {
	for _, v := range []*Vector{New(3, 0), Repeat(3, nil)} {
		if v.Len() != 3 || len(v.Bufs[0]) != 0 {
			t.Errorf("Len %d, buf %d bytes", v.Len(), len(v.Bufs[0]))
		}
	}
}
