//go:build linux

package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/netns"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/xdpbench"
)

func xdpMonotonic(t *testing.T) uint64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

// xdpStrategy returns the named row of the benchmark.
func xdpStrategy(t *testing.T, name string) xdpbench.Strategy {
	t.Helper()
	for _, st := range xdpbench.Strategies() {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no strategy %q", name)
	return xdpbench.Strategy{}
}

// xdpCheckNothingLeft fails if a namespace of this process outlived its
// test: registered first, it runs after every other cleanup.
func xdpCheckNothingLeft(t *testing.T) {
	t.Cleanup(func() {
		if owned, err := netns.Owned(); err != nil || len(owned) > 0 {
			t.Errorf("namespaces left behind: %v %v", owned, err)
		}
	})
}

// TestXDPEventsMatchPackets sends datagrams of several sizes from A to B
// through the capture program, in both attach modes and for both
// transports, and checks each event against the packet that was sent:
// its length, the Ethernet, IPv4 and UDP headers and payload in the
// captured bytes, and a capture time between the send and the read.
func TestXDPEventsMatchPackets(t *testing.T) {
	xdpSkipUnlessAvailable(t)
	xdpCheckNothingLeft(t)
	for _, tc := range []struct {
		strategy string
		mode     xdpbench.Mode
	}{
		{"rb-epoll", xdpbench.Native},
		{"rb-epoll", xdpbench.Generic},
		{"perf-epoll", xdpbench.Native},
		{"perf-epoll", xdpbench.Generic},
	} {
		t.Run(tc.strategy+"/"+string(tc.mode), func(t *testing.T) {
			c, err := xdpbench.NewCapture(xdpStrategy(t, tc.strategy), 1<<16, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := c.Close(); err != nil {
					t.Error(err)
				}
			})
			if c.Mode != tc.mode {
				t.Fatalf("attached in %s mode, want %s", c.Mode, tc.mode)
			}
			next := xdpEventReader(t, c)
			conn := xdpDialer(t, c.Pair)
			const port = 7777
			for i, payload := range []int{1, 64, 123, 124, 500, 1400} {
				data := bytes.Repeat([]byte{byte(i + 1), 0xa5}, payload)[:payload]
				before := xdpMonotonic(t)
				if _, err := conn.WriteToUDPAddrPort(data, netip.AddrPortFrom(c.Pair.B.Addr, port)); err != nil {
					t.Fatal(err)
				}
				ev, err := progs.DecodeXDPEvent(next(t))
				after := xdpMonotonic(t)
				if err != nil {
					t.Fatal(err)
				}
				wantLen := 14 + 20 + 8 + payload
				if ev.Seq != uint64(i) || ev.Len != uint32(wantLen) || ev.CapLen != uint32(min(wantLen, progs.XDPCaptureMax)) {
					t.Fatalf("packet %d: seq %d len %d caplen %d; want %d, %d, %d",
						i, ev.Seq, ev.Len, ev.CapLen, i, wantLen, min(wantLen, progs.XDPCaptureMax))
				}
				if ev.Time < before || ev.Time > after {
					t.Errorf("packet %d: capture time %d outside send..read [%d, %d]", i, ev.Time, before, after)
				}
				xdpCheckFrame(t, ev.Data, c.Pair, conn.LocalAddr().(*net.UDPAddr).AddrPort(), port, data)
			}
		})
	}
}

// xdpCheckFrame checks the captured bytes of a UDP datagram from A to B.
func xdpCheckFrame(t *testing.T, frame []byte, p *netns.Pair, src netip.AddrPort, dstPort uint16, payload []byte) {
	t.Helper()
	want := []struct {
		what      string
		off       int
		got, want []byte
	}{
		{"destination MAC", 0, frame[0:6], p.B.MAC},
		{"source MAC", 6, frame[6:12], p.A.MAC},
		{"EtherType", 12, frame[12:14], []byte{0x08, 0x00}},
		{"IP protocol", 23, frame[23:24], []byte{unix.IPPROTO_UDP}},
		{"source IP", 26, frame[26:30], p.A.Addr.AsSlice()},
		{"destination IP", 30, frame[30:34], p.B.Addr.AsSlice()},
		{"source port", 34, frame[34:36], binary.BigEndian.AppendUint16(nil, src.Port())},
		{"destination port", 36, frame[36:38], binary.BigEndian.AppendUint16(nil, dstPort)},
		{"payload", 42, frame[42:], payload[:len(frame)-42]},
	}
	for _, w := range want {
		if !bytes.Equal(w.got, w.want) {
			t.Errorf("%s at %d: % x, want % x", w.what, w.off, w.got, w.want)
		}
	}
}

// xdpDialer opens an unconnected UDP socket in A.
func xdpDialer(t *testing.T, p *netns.Pair) *net.UDPConn {
	t.Helper()
	var conn *net.UDPConn
	err := p.A.Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.A.Addr, 0)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// xdpEventReader returns a function that reads the next raw event, with
// cilium/ebpf's readers: this test checks the program, not our reader.
func xdpEventReader(t *testing.T, c *xdpbench.Capture) func(*testing.T) []byte {
	t.Helper()
	if c.Events.Type() == ebpf.PerfEventArray {
		rd, err := perf.NewReader(c.Events, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rd.Close() })
		return func(t *testing.T) []byte {
			rd.SetDeadline(time.Now().Add(5 * time.Second))
			rec, err := rd.Read()
			if err != nil {
				t.Fatal(err)
			}
			if rec.LostSamples > 0 {
				t.Fatalf("perf lost %d samples", rec.LostSamples)
			}
			return rec.RawSample
		}
	}
	rd, err := ringbuf.NewReader(c.Events)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return func(t *testing.T) []byte {
		rd.SetDeadline(time.Now().Add(5 * time.Second))
		rec, err := rd.Read()
		if err != nil {
			t.Fatal(err)
		}
		return rec.RawSample
	}
}

// TestXDPStrategies runs every row of the benchmark for a moment at a low
// rate, where nothing may be lost, and checks the accounting: every
// packet seen by the program, every event delivered exactly once, a
// latency for each.
func TestXDPStrategies(t *testing.T) {
	xdpSkipUnlessAvailable(t)
	xdpCheckNothingLeft(t)
	for _, st := range xdpbench.Strategies() {
		t.Run(st.Name, func(t *testing.T) {
			res, err := xdpbench.Run(context.Background(), xdpbench.Config{
				Strategy: st, PPS: 2000, Duration: 200 * time.Millisecond, ConsumerCPU: -1, RingSize: 1 << 16,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent < 300 || res.XDPRuns != res.Sent {
				t.Errorf("sent %d, program saw %d: want about 400, all seen", res.Sent, res.XDPRuns)
			}
			if res.SeqErr != nil || res.Malformed > 0 {
				t.Errorf("sequence check: %v; %d malformed", res.SeqErr, res.Malformed)
			}
			wantEvents := res.Sent
			if st.Output == progs.XDPNoOutput {
				wantEvents = 0
			}
			if res.Numbered != wantEvents || res.Delivered != wantEvents || res.Dropped != 0 || res.Latency.Count() != wantEvents {
				t.Errorf("numbered %d, delivered %d, dropped %d, latencies %d; want %d, %d, 0, %d",
					res.Numbered, res.Delivered, res.Dropped, res.Latency.Count(), wantEvents, wantEvents, wantEvents)
			}
			if wantEvents > 0 && (res.Latency.Percentile(0.5) <= 0 || res.Latency.Max() > 5*time.Second) {
				t.Errorf("latency p50 %v max %v", res.Latency.Percentile(0.5), res.Latency.Max())
			}
			if res.Consumer.Total() < 0 || res.BPFRunTime <= 0 {
				t.Errorf("consumer CPU %v, BPF run time %v", res.Consumer, res.BPFRunTime)
			}
		})
	}
}

// TestXDPCleansUpOnFailure makes a run fail after the namespaces exist
// (an attach mode that does not exist) and checks nothing is left.
func TestXDPCleansUpOnFailure(t *testing.T) {
	xdpSkipUnlessAvailable(t)
	xdpCheckNothingLeft(t)
	_, err := xdpbench.Run(context.Background(), xdpbench.Config{
		Strategy: xdpStrategy(t, "rb-epoll"), Duration: time.Second, ConsumerCPU: -1, Mode: "offload-to-the-moon",
	})
	if err == nil {
		t.Fatal("no error for an unknown attach mode")
	}
}
