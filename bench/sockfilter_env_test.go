//go:build linux

package bench

import (
	"os"
	"testing"
	"time"
)

// sockfilterKnobs are the socket filter benchmark's settings, from the
// environment:
//
//	SOCKF_BAD       bad clients per good client (0,1,2,4)
//	SOCKF_PAYLOADS  good payload sizes in bytes (1,64,1024)
//	SOCKF_DURATION  how long the clients send per row (2s)
//	SOCKF_RECVS     datagrams per server receive call at most, one row
//	                each: 1 is a plain recv loop, 64 recvmmsg (1,64)
type sockfilterKnobs struct {
	bad, payloads, recvs []int
	duration             time.Duration
}

func sockfilterEnv(t testing.TB) sockfilterKnobs {
	t.Helper()
	k := sockfilterKnobs{
		bad:      xdpInts(t, "SOCKF_BAD", []int{0, 1, 2, 4}),
		payloads: xdpInts(t, "SOCKF_PAYLOADS", []int{1, 64, 1024}),
		recvs:    xdpInts(t, "SOCKF_RECVS", []int{1, 64}),
		duration: xdpDuration(t, "SOCKF_DURATION", 2*time.Second),
	}
	if xdpSmoke() && os.Getenv("SOCKF_DURATION") == "" {
		// make test's smoke run: every row for a moment.
		k.duration = 50 * time.Millisecond
	}
	return k
}
