//go:build linux

package xdpflood

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/netns"
)

func newTestPair(t *testing.T) *netns.Pair {
	t.Helper()
	if err := netns.Available(); err != nil {
		t.Skipf("cannot create network namespaces here: %v", err)
	}
	p, err := netns.NewPair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// listen opens a UDP socket in B with room for everything a short test
// flood sends.
func listen(t *testing.T, p *netns.Pair) *net.UDPConn {
	t.Helper()
	var conn *net.UDPConn
	err := p.B.Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.B.Addr, 0)))
		if err == nil {
			err = conn.SetReadBuffer(8 << 20)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestFloodDelivers sends short floods and checks the datagrams arrive
// with the expected size and bytes, at about the rate asked.
func TestFloodDelivers(t *testing.T) {
	p := newTestPair(t)
	for _, tc := range []struct {
		name             string
		pps, senders     int
		minSent, maxSent uint64
	}{
		{"paced", 2000, 2, 300, 500}, // 0.2 s at 2000/s: 400
		{"flood", 0, 2, 1000, 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := listen(t, p)
			const payload = 100
			stats, err := Run(context.Background(), Config{
				From: &p.A, To: conn.LocalAddr().(*net.UDPAddr).AddrPort(),
				Payload: payload, PPS: tc.pps, Duration: 200 * time.Millisecond,
				Senders: tc.senders, Batch: 8,
			})
			if err != nil {
				t.Fatal(err)
			}
			if stats.Sent < tc.minSent || stats.Sent > tc.maxSent {
				t.Errorf("sent %d in %v, want [%d, %d]", stats.Sent, stats.Elapsed, tc.minSent, tc.maxSent)
			}
			buf := make([]byte, 2048)
			for i := range 10 {
				conn.SetReadDeadline(time.Now().Add(time.Second))
				n, src, err := conn.ReadFromUDPAddrPort(buf)
				if err != nil {
					t.Fatalf("datagram %d: %v", i, err)
				}
				want := Payload(payload, int(buf[0]))
				if src.Addr() != p.A.Addr || !bytes.Equal(buf[:n], want) || int(buf[0]) >= tc.senders {
					t.Fatalf("datagram %d from %v: % x, want % x", i, src, buf[:n], want)
				}
			}
		})
	}
}

// TestFloodRejectsBadConfig checks the configurations Run refuses.
func TestFloodRejectsBadConfig(t *testing.T) {
	end := &netns.End{Namespace: "unused"}
	dst := netip.MustParseAddrPort("198.18.0.2:9")
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no namespace", Config{To: dst, Payload: 10, Duration: time.Second}},
		{"no destination", Config{From: end, Payload: 10, Duration: time.Second}},
		{"IPv6", Config{From: end, To: netip.MustParseAddrPort("[::1]:9"), Payload: 10, Duration: time.Second}},
		{"empty payload", Config{From: end, To: dst, Duration: time.Second}},
		{"jumbo payload", Config{From: end, To: dst, Payload: 9000, Duration: time.Second}},
		{"no duration", Config{From: end, To: dst, Payload: 10}},
		{"missing namespace", Config{From: end, To: dst, Payload: 10, Duration: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tc.cfg); err == nil {
				t.Error("no error")
			}
		})
	}
}
