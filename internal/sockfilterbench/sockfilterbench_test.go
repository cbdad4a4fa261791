//go:build linux

package sockfilterbench_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/sockfilterbench"
)

// newFilter loads the drop-empty filter and its counters.
func newFilter(t *testing.T) (*ebpf.Program, *ebpf.Map) {
	t.Helper()
	counters, err := progs.NewCounters()
	bpftest.SkipIfUnavailable(t, err, "BPF socket filters")
	t.Cleanup(func() { counters.Close() })
	prog, err := progs.NewDropEmptyUDP(counters)
	bpftest.SkipIfUnavailable(t, err, "BPF socket filters")
	t.Cleanup(func() { prog.Close() })
	return prog, counters
}

// TestDropEmptyFilter sends numbered and empty datagrams in turn over
// real sockets, one at a time so the receive buffer never fills, and
// checks what reaches the server: every numbered one, in order, and the
// empty ones only without the filter. It checks too that the filter's
// drops show in the socket's drop count, which the benchmark's overflow
// figure depends on.
func TestDropEmptyFilter(t *testing.T) {
	const pairs = 100
	for _, filter := range []bool{false, true} {
		t.Run(map[bool]string{false: "filter=off", true: "filter=on"}[filter], func(t *testing.T) {
			prog, counters := newFilter(t)
			server, port, err := sockfilterbench.Listen(time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(server)
			if filter {
				if err := sockfilterbench.AttachFilter(server, prog.FD()); err != nil {
					t.Fatal(err)
				}
			}
			client, err := sockfilterbench.Dial(port)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(client)

			buf := make([]byte, 64)
			recv := func() int {
				t.Helper()
				n, _, err := unix.Recvfrom(server, buf, 0)
				if err != nil {
					t.Fatalf("server read: %v", err)
				}
				return n
			}
			good := make([]byte, 8)
			for seq := range uint64(pairs) {
				binary.LittleEndian.PutUint64(good, seq)
				if _, err := unix.Write(client, good); err != nil {
					t.Fatal(err)
				}
				if _, err := unix.Write(client, nil); err != nil {
					t.Fatal(err)
				}
				if n := recv(); n != 8 || binary.LittleEndian.Uint64(buf) != seq {
					t.Fatalf("read %d bytes %x, want datagram %d", n, buf[:n], seq)
				}
				if !filter {
					if n := recv(); n != 0 {
						t.Fatalf("read %d bytes, want the empty datagram", n)
					}
				}
			}
			// Nothing else is waiting: with the filter, no empty datagram
			// got through late.
			n, _, err := unix.Recvfrom(server, buf, unix.MSG_DONTWAIT)
			if !errors.Is(err, unix.EAGAIN) {
				t.Fatalf("socket not empty after the exchange: read %d bytes, err %v", n, err)
			}

			kept, dropped, err := progs.ReadCounters(counters)
			if err != nil {
				t.Fatal(err)
			}
			drops, err := sockfilterbench.SocketDrops(server)
			if err != nil {
				t.Fatal(err)
			}
			want := [3]uint64{0, 0, 0}
			if filter {
				want = [3]uint64{pairs, pairs, pairs}
			}
			if got := [3]uint64{kept, dropped, uint64(drops)}; got != want {
				t.Fatalf("filter kept, filter dropped, socket drops = %v, want %v", got, want)
			}
		})
	}
}

// TestRunCountsEveryDatagram runs a short load with the filter and checks
// the books balance: the server reads no empty datagram, and every good
// one sent was either read once or dropped at the full receive buffer.
func TestRunCountsEveryDatagram(t *testing.T) {
	for _, bad := range []int{0, 2} {
		prog, counters := newFilter(t)
		res, err := sockfilterbench.Run(sockfilterbench.Config{Bad: bad, Payload: 64, Duration: 100 * time.Millisecond, FilterFD: prog.FD()})
		if err != nil {
			t.Fatal(err)
		}
		kept, dropped, err := progs.ReadCounters(counters)
		if err != nil {
			t.Fatal(err)
		}
		if res.Good == 0 || res.GoodSent == 0 || res.RecvCalls == 0 {
			t.Fatalf("bad=%d: nothing moved: %+v", bad, res)
		}
		if res.Empty != 0 || dropped != res.BadSent || kept != res.GoodSent {
			t.Fatalf("bad=%d: server read %d empty datagrams; filter kept %d, dropped %d; clients sent %d good, %d bad",
				bad, res.Empty, kept, dropped, res.GoodSent, res.BadSent)
		}
		overflow := res.SocketDrops - dropped
		if err := res.Seq.Check(res.GoodSent, overflow); err != nil {
			t.Fatalf("bad=%d: %v", bad, err)
		}
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	for _, cfg := range []sockfilterbench.Config{
		{Payload: 0, Duration: time.Millisecond},
		{Payload: 8, Duration: 0},
		{Payload: 8, Bad: -1, Duration: time.Millisecond},
	} {
		if _, err := sockfilterbench.Run(cfg); err == nil {
			t.Errorf("Run(%+v) = nil error", cfg)
		}
	}
}
