//go:build linux

package netns

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

func newTestPair(t *testing.T) *Pair {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("cannot create network namespaces here: %v", err)
	}
	p, err := NewPair()
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

// TestPairCarriesUDP sends a datagram each way and checks it arrives
// from the other end's address.
func TestPairCarriesUDP(t *testing.T) {
	p := newTestPair(t)
	for _, tc := range []struct {
		name     string
		from, to *End
	}{
		{"a-to-b", &p.A, &p.B},
		{"b-to-a", &p.B, &p.A},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.from.Index == 0 || tc.to.MAC == nil {
				t.Fatalf("interface not looked up: %+v", tc.to)
			}
			var conn *net.UDPConn
			err := tc.to.Do(func() (err error) {
				conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(tc.to.Addr, 0)))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			dst := conn.LocalAddr().(*net.UDPAddr).AddrPort()
			want := []byte("hello " + tc.name)
			err = tc.from.Do(func() error {
				c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(dst))
				if err != nil {
					return err
				}
				defer c.Close()
				_, err = c.Write(want)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 100)
			n, src, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				t.Fatal(err)
			}
			if string(buf[:n]) != string(want) || src.Addr() != tc.from.Addr {
				t.Errorf("got %q from %v, want %q from %v", buf[:n], src, want, tc.from.Addr)
			}
			from, err := tc.from.Stats()
			if err != nil {
				t.Fatal(err)
			}
			to, err := tc.to.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if from.TxPackets == 0 || to.RxPackets == 0 {
				t.Errorf("counters did not move: sender %+v, receiver %+v", from, to)
			}
		})
	}
}

// TestPairCloseRemovesNamespaces checks that Close removes both
// namespaces and may be called again.
func TestPairCloseRemovesNamespaces(t *testing.T) {
	p := newTestPair(t)
	if !p.A.Exists() || !p.B.Exists() {
		t.Fatal("namespaces missing after NewPair")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p.A.Exists() || p.B.Exists() {
		t.Error("namespaces still there after Close")
	}
	if owned, err := Owned(); err != nil || len(owned) != 0 {
		t.Errorf("Owned after Close: %v, %v", owned, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
