//go:build linux

package bench

import (
	"strconv"
	"testing"

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
	if res.Good+res.Empty+res.SocketDrops != res.GoodSent+res.BadSent {
		b.Errorf("server read %d good and %d empty datagrams, the socket dropped %d, the clients sent %d: the books do not balance",
			res.Good, res.Empty, res.SocketDrops, res.GoodSent+res.BadSent)
	}
	if res.SocketDrops < filtered {
		b.Fatalf("the socket counted %d drops, fewer than the %d its filter made", res.SocketDrops, filtered)
	}
	overflow := res.SocketDrops - filtered
	if filter {
		if res.Empty != 0 || kept != res.GoodSent || filtered != res.BadSent {
			b.Errorf("filter kept %d of %d good datagrams and dropped %d of %d empty ones; %d empty reached the server",
				kept, res.GoodSent, filtered, res.BadSent, res.Empty)
		}
		// Every good datagram the filter kept was read once or found
		// the receive buffer full.
		if res.Seq != nil {
			if err := res.Seq.Check(res.GoodSent, overflow); err != nil {
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
