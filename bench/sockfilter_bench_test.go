//go:build linux

package bench

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/internal/sockfilterbench"
)

// BenchmarkSocketFilter runs a UDP server on [::1] against one good
// client (non-empty datagrams) and bad=N clients sending empty ones, all
// as fast as they can for SOCKF_DURATION, with and without a socket
// filter that drops empty datagrams in the kernel. It reports what the
// server got: good payload bytes and datagrams per second, datagrams and
// receive calls per good one, and the datagrams dropped by the filter and
// at the full receive buffer. Run it with -benchtime 1x: each row is one
// timed run whatever b.N is. A row fails if the books do not balance
// (every datagram sent is read or counted dropped by the socket), if an
// empty datagram reaches the server through the filter, or if the filter
// drops a good one.
func BenchmarkSocketFilter(b *testing.B) {
	k := sockfilterEnv(b)
	for _, filter := range []bool{false, true} {
		for _, bad := range k.bad {
			for _, payload := range k.payloads {
				for _, recvs := range k.recvs {
					name := "filter=" + map[bool]string{false: "off", true: "on"}[filter] +
						"/bad=" + strconv.Itoa(bad) + "/payload=" + strconv.Itoa(payload) + "/recv=" + strconv.Itoa(recvs)
					b.Run(name, func(b *testing.B) {
						sockfilterRow(b, filter, sockfilterbench.Config{Bad: bad, Payload: payload, Duration: k.duration, RecvBatch: recvs})
					})
				}
			}
		}
	}
}

func sockfilterRow(b *testing.B, filter bool, cfg sockfilterbench.Config) {
	counters, err := progs.NewCounters()
	skipWithoutSocketFilters(b, err)
	defer counters.Close()
	if filter {
		prog, err := progs.NewDropEmptyUDP(counters)
		skipWithoutSocketFilters(b, err)
		defer prog.Close()
		cfg.FilterFD = prog.FD()
	}
	res, err := sockfilterbench.Run(cfg)
	if err != nil {
		b.Fatal(err)
	}
	kept, filtered, err := progs.ReadCounters(counters)
	if err != nil {
		b.Fatal(err)
	}
	// Every datagram sent was read, dropped by the socket (its filter, a
	// full buffer) or, before any socket saw it, by a full input backlog
	// (a test VM under emulation falls behind): the books balance only
	// with all three. Backlog drops are the machine's, so they may also
	// count other packets: the balance is exact where there are none.
	sent, accounted := res.GoodSent+res.BadSent, res.Good+res.Empty+res.SocketDrops
	if accounted > sent || accounted+res.BacklogDrops < sent {
		b.Errorf("server read %d good and %d empty datagrams, the socket dropped %d, the backlog %d, the clients sent %d: the books do not balance",
			res.Good, res.Empty, res.SocketDrops, res.BacklogDrops, sent)
	}
	if res.SocketDrops < filtered {
		b.Fatalf("the socket counted %d drops, fewer than the %d its filter made", res.SocketDrops, filtered)
	}
	overflow := res.SocketDrops - filtered
	if filter {
		// What the filter saw is what the backlog let through.
		lostEarly := sent - (kept + filtered)
		if res.Empty != 0 || kept > res.GoodSent || filtered > res.BadSent || kept+filtered > sent || lostEarly > res.BacklogDrops {
			b.Errorf("filter kept %d of %d good datagrams and dropped %d of %d empty ones (%d backlog drops); %d empty reached the server",
				kept, res.GoodSent, filtered, res.BadSent, res.BacklogDrops, res.Empty)
		}
		// Every good datagram was read once, found the receive buffer
		// full, or was lost before the filter saw it.
		if res.Seq != nil {
			if err := res.Seq.Check(res.GoodSent, overflow+res.GoodSent-kept); err != nil {
				b.Error(err)
			}
		}
	}

	secs := res.Elapsed.Seconds()
	perGood := func(n uint64) float64 {
		if res.Good == 0 {
			return 0
		}
		return float64(n) / float64(res.Good)
	}
	goodLost := 0.0
	if res.GoodSent > 0 {
		goodLost = 100 * float64(res.GoodSent-res.Good) / float64(res.GoodSent)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(res.GoodBytes)/secs, "good-B/s")
	b.ReportMetric(float64(res.Good)/secs, "good-pkts/s")
	b.ReportMetric(perGood(res.Good+res.Empty), "reads/good")
	b.ReportMetric(perGood(res.RecvCalls), "calls/good")
	b.ReportMetric(float64(filtered)/secs, "filter-drops/s")
	b.ReportMetric(float64(overflow)/secs, "ovfl-drops/s")
	b.ReportMetric(goodLost, "good-lost-%")
	b.ReportMetric(float64(res.BadSent)/secs, "bad-sent/s")
}

// skipWithoutSocketFilters skips when the kernel or the privileges do not
// allow BPF maps and socket filters.
func skipWithoutSocketFilters(b *testing.B, err error) {
	b.Helper()
	bpftest.SkipIfUnavailable(b, err, "BPF maps and socket filters, which the socket filter benchmark needs,")
}

// sockfilterKnobs are the socket filter benchmark's settings, from the
// environment (SOCKF_*, internal/benchfamily/sockfilter.go).
type sockfilterKnobs struct {
	bad, payloads, recvs []int
	duration             time.Duration
}

func sockfilterEnv(t testing.TB) sockfilterKnobs {
	t.Helper()
	k := sockfilterKnobs{
		bad:      knobInts(t, "SOCKF_BAD"),
		payloads: knobInts(t, "SOCKF_PAYLOADS"),
		recvs:    knobInts(t, "SOCKF_RECVS"),
		duration: knobDuration(t, "SOCKF_DURATION"),
	}
	if smokeRun() && os.Getenv("SOCKF_DURATION") == "" {
		// make test's smoke run: every row for a moment.
		k.duration = 50 * time.Millisecond
	}
	return k
}
