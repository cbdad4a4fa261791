//go:build linux

// Package xdpflood sends a UDP flood of fixed-size datagrams from one
// network namespace of a netns.Pair to the other, at a target rate or as
// fast as the senders can, for a bounded time: the traffic XDP benchmarks
// capture.
//
// Each sender is a goroutine locked to an OS thread that entered the
// sending namespace (and, optionally, was pinned to a CPU); it sends
// batches with sendmmsg(2) on a connected socket, so one system call
// carries up to Config.Batch datagrams. The thread is never handed back to
// the Go scheduler: it ends with its goroutine.
package xdpflood

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/cpustat"
	"github.com/ebpf-zc/ebpf/internal/mmsg"
	"github.com/ebpf-zc/ebpf/internal/netns"
)

// Config describes a flood.
type Config struct {
	// From is the namespace to send from.
	From *netns.End
	// To is where the datagrams go: an address in the other namespace.
	To netip.AddrPort
	// Payload is each datagram's UDP payload in bytes.
	Payload int
	// PPS is the target rate over all senders, in datagrams per second;
	// 0 sends as fast as the senders can.
	PPS int
	// Duration bounds the flood; it also stops when the context ends.
	Duration time.Duration
	// Senders is the number of sending goroutines; 0 means 1.
	Senders int
	// CPUs, if not empty, pins sender i to CPUs[i%len(CPUs)].
	CPUs []int
	// Batch is the number of datagrams per sendmmsg call; 0 means 32.
	Batch int
}

// Stats is what a flood sent.
type Stats struct {
	// Sent counts datagrams the kernel accepted.
	Sent uint64
	// Refused counts datagrams the kernel refused (ENOBUFS, EAGAIN, ...):
	// they never reached the link.
	Refused uint64
	// Elapsed is the time from the first send to the last sender's end.
	Elapsed time.Duration
}

// PPS is the rate the kernel accepted datagrams at.
func (s Stats) PPS() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Sent) / s.Elapsed.Seconds()
}

// maxBatch bounds Config.Batch: UIO_MAXIOV is the kernel's limit for
// sendmmsg's vector.
const maxBatch = 1024

// Run sends the flood and returns when every sender has stopped.
func Run(ctx context.Context, cfg Config) (Stats, error) {
	if cfg.From == nil || !cfg.To.IsValid() || !cfg.To.Addr().Is4() {
		return Stats{}, errors.New("xdpflood: need a namespace and an IPv4 destination")
	}
	if cfg.Payload < 1 || cfg.Payload > 1472 {
		return Stats{}, fmt.Errorf("xdpflood: payload %d outside [1, 1472]", cfg.Payload)
	}
	if cfg.Duration <= 0 {
		return Stats{}, errors.New("xdpflood: a flood needs a duration")
	}
	cfg.Senders = max(cfg.Senders, 1)
	if cfg.Batch <= 0 {
		cfg.Batch = 32
	}
	cfg.Batch = min(cfg.Batch, maxBatch)

	var (
		wg, ready     sync.WaitGroup
		sent, refused atomic.Uint64
		errMu         sync.Mutex
		firstErr      error
		failed        atomic.Bool
		startAll      = make(chan struct{})
		start         time.Time // set before startAll closes
		rate          = float64(cfg.PPS) / float64(cfg.Senders)
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		failed.Store(true)
	}
	for i := range cfg.Senders {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			s, err := newSender(cfg, i)
			ready.Done()
			if err != nil {
				fail(err)
				return
			}
			defer s.close()
			<-startAll
			if failed.Load() {
				return
			}
			ok, bad, err := s.run(ctx, start, start.Add(cfg.Duration), rate)
			sent.Add(ok)
			refused.Add(bad)
			if err != nil {
				fail(err)
			}
		}()
	}
	// Start every sender together, so the rate holds from the first
	// datagram.
	ready.Wait()
	start = time.Now()
	close(startAll)
	wg.Wait()
	return Stats{Sent: sent.Load(), Refused: refused.Load(), Elapsed: time.Since(start)}, firstErr
}

// sender is one sending thread's socket and batch.
type sender struct {
	fd    int
	msgs  *mmsg.Vector
	batch int
}

// newSender enters the namespace on the calling goroutine's thread,
// pins it, and opens a socket connected to the destination. The thread
// stays locked: see netns.End.Enter.
func newSender(cfg Config, i int) (*sender, error) {
	if err := cfg.From.Enter(); err != nil {
		return nil, err
	}
	if len(cfg.CPUs) > 0 {
		// Pin locks the thread too; its unpin function is never called,
		// for the thread must not go back to the pool.
		if _, err := cpustat.Pin(cfg.CPUs[i%len(cfg.CPUs)]); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("xdpflood: socket: %w", err)
	}
	sa := &unix.SockaddrInet4{Port: int(cfg.To.Port()), Addr: cfg.To.Addr().As4()}
	if err := unix.Connect(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("xdpflood: connect %v: %w", cfg.To, err)
	}
	// Every message sends the same bytes: the flood measures transport,
	// not content.
	return &sender{fd: fd, msgs: mmsg.Repeat(cfg.Batch, Payload(cfg.Payload, i)), batch: cfg.Batch}, nil
}

// Payload returns the bytes sender i puts in every datagram: its number
// in the first byte, then a pattern a receiver can check.
func Payload(n, sender int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(j)
	}
	b[0] = byte(sender)
	return b
}

func (s *sender) close() { unix.Close(s.fd) }

// run sends until the deadline or the context's end. With a rate, it
// sends what is due, up to a batch, then sleeps for the next batch's
// worth of time; without, it sends batch after batch.
func (s *sender) run(ctx context.Context, start, deadline time.Time, rate float64) (sent, refused uint64, err error) {
	var due uint64
	for checks := 0; ; checks++ {
		now := time.Now()
		if !now.Before(deadline) || checks%64 == 0 && ctx.Err() != nil {
			return sent, refused, nil
		}
		n := s.batch
		if rate > 0 {
			due = uint64(now.Sub(start).Seconds() * rate)
			if due <= sent+refused {
				// Nothing due: sleep until a batch is, on this thread
				// (a Go timer would round sub-millisecond sleeps up to a
				// millisecond when the process is otherwise idle).
				wait := time.Duration(float64(s.batch) / rate * float64(time.Second))
				wait = min(wait, deadline.Sub(now), time.Millisecond)
				ts := unix.NsecToTimespec(wait.Nanoseconds())
				unix.Nanosleep(&ts, nil)
				continue
			}
			n = int(min(due-sent-refused, uint64(s.batch)))
		}
		ok, errno := s.msgs.Send(s.fd, n)
		sent += uint64(ok)
		switch errno {
		case 0:
		case unix.ECONNREFUSED, unix.EINTR:
			// Nothing sent: an ICMP port unreachable from the peer
			// surfaces on a connected socket's next send; retry.
		case unix.ENOBUFS, unix.EAGAIN:
			// The first datagram was refused: count it and go on, so a
			// paced flood does not retry forever.
			refused++
		default:
			return sent, refused, fmt.Errorf("xdpflood: sendmmsg: %w", errno)
		}
	}
}
