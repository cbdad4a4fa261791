//go:build linux

package progs

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// monotonicNow reads CLOCK_MONOTONIC, the clock bpf_ktime_get_ns reads.
func monotonicNow(t *testing.T) uint64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

// packet returns n bytes that differ from one offset to the next.
func packet(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// xdpEventSource reads one raw event from whatever the program sent to.
type xdpEventSource func(t *testing.T) []byte

func newXDPOutput(t *testing.T, out XDPOutput) (*ebpf.Map, xdpEventSource) {
	t.Helper()
	switch out {
	case XDPRingbuf:
		m, err := NewRing(1 << 16)
		skipIfNoBPF(t, err)
		t.Cleanup(func() { m.Close() })
		rd, err := ringbuf.NewReader(m)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rd.Close() })
		return m, func(t *testing.T) []byte {
			rd.SetDeadline(time.Now().Add(time.Second))
			rec, err := rd.Read()
			if err != nil {
				t.Fatal(err)
			}
			return rec.RawSample
		}
	case XDPPerf:
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray})
		skipIfNoBPF(t, err)
		t.Cleanup(func() { m.Close() })
		rd, err := perf.NewReader(m, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rd.Close() })
		return m, func(t *testing.T) []byte {
			rd.SetDeadline(time.Now().Add(time.Second))
			rec, err := rd.Read()
			if err != nil {
				t.Fatal(err)
			}
			if rec.LostSamples != 0 {
				t.Fatalf("perf lost %d samples", rec.LostSamples)
			}
			return rec.RawSample
		}
	}
	return nil, nil
}

// TestXDPCaptureEvents runs the capture program on packets of several
// lengths with test-run and checks every field of the events it sends.
func TestXDPCaptureEvents(t *testing.T) {
	for _, out := range []XDPOutput{XDPRingbuf, XDPPerf} {
		t.Run(out.String(), func(t *testing.T) {
			m, next := newXDPOutput(t, out)
			c, err := NewXDPCapture(XDPSpec{Output: out, Map: m})
			skipIfNoBPF(t, err)
			t.Cleanup(func() { c.Close() })
			for i, size := range []int{14, 60, XDPCaptureMax - 1, XDPCaptureMax, XDPCaptureMax + 1, 1500} {
				pkt := packet(size)
				before := monotonicNow(t)
				ret, err := c.Program.Run(&ebpf.RunOptions{Data: pkt})
				if err != nil {
					t.Fatal(err)
				}
				after := monotonicNow(t)
				if ret != XDPPass {
					t.Errorf("size %d: verdict %d, want XDP_PASS", size, ret)
				}
				ev, err := DecodeXDPEvent(next(t))
				if err != nil {
					t.Fatal(err)
				}
				wantCap := min(size, XDPCaptureMax)
				switch {
				case ev.Seq != uint64(i):
					t.Errorf("size %d: sequence %d, want %d", size, ev.Seq, i)
				case ev.Time < before || ev.Time > after:
					t.Errorf("size %d: time %d outside [%d, %d]", size, ev.Time, before, after)
				case ev.Len != uint32(size) || ev.CapLen != uint32(wantCap):
					t.Errorf("size %d: length %d, captured %d; want %d, %d", size, ev.Len, ev.CapLen, size, wantCap)
				case !bytes.Equal(ev.Data, pkt[:wantCap]):
					t.Errorf("size %d: captured bytes differ from the packet", size)
				}
			}
			numbered, dropped, err := ReadCounters(c.Counters)
			if err != nil {
				t.Fatal(err)
			}
			if numbered != 6 || dropped != 0 {
				t.Errorf("counters: %d numbered, %d dropped; want 6, 0", numbered, dropped)
			}
		})
	}
}

// TestXDPCaptureCountsDrops fills a small ring that nobody reads and
// checks the program counts every event it could not reserve.
func TestXDPCaptureCountsDrops(t *testing.T) {
	m, err := NewRing(os.Getpagesize())
	skipIfNoBPF(t, err)
	t.Cleanup(func() { m.Close() })
	c, err := NewXDPCapture(XDPSpec{Output: XDPRingbuf, Map: m})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { c.Close() })
	const runs = 100
	if _, err := c.Program.Run(&ebpf.RunOptions{Data: packet(64), Repeat: runs}); err != nil {
		t.Fatal(err)
	}
	numbered, dropped, err := ReadCounters(c.Counters)
	if err != nil {
		t.Fatal(err)
	}
	fits := uint64(os.Getpagesize() / ((XDPEventSize + 8 + 7) &^ 7))
	if numbered < runs || dropped == 0 || numbered-dropped > fits {
		t.Errorf("%d numbered, %d dropped; want at least %d numbered and at most %d kept", numbered, dropped, runs, fits)
	}
}

// TestXDPCaptureNoOutput checks the baseline program passes packets and
// rejects a map it would not use correctly.
func TestXDPCaptureNoOutput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    XDPSpec
		wantRet uint32
	}{
		{"pass", XDPSpec{}, XDPPass},
		{"drop", XDPSpec{Verdict: XDPDrop}, XDPDrop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewXDPCapture(tc.spec)
			skipIfNoBPF(t, err)
			t.Cleanup(func() { c.Close() })
			ret, err := c.Program.Run(&ebpf.RunOptions{Data: packet(64)})
			if err != nil {
				t.Fatal(err)
			}
			if ret != tc.wantRet {
				t.Errorf("verdict %d, want %d", ret, tc.wantRet)
			}
		})
	}
	for _, spec := range []XDPSpec{{Output: XDPRingbuf}, {Output: XDPPerf}, {Output: 9}} {
		if c, err := NewXDPCapture(spec); err == nil {
			c.Close()
			t.Errorf("%v without a map: no error", spec.Output)
		}
	}
}
