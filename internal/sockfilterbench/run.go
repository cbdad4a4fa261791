//go:build linux

package sockfilterbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/mmsg"

	"github.com/ebpf-zc/ebpf/internal/seqcheck"
)

// Config is one load run.
type Config struct {
	// Bad is the number of clients sending empty datagrams beside the
	// one good client.
	Bad int
	// Payload is the good client's payload in bytes, at least 1. From 8
	// bytes on, each carries its sequence number in the first 8.
	Payload int
	// Duration is how long the clients send.
	Duration time.Duration
	// FilterFD, if not zero, is a socket filter program attached to the
	// server's socket before the clients start.
	FilterFD int
	// Batch is how many datagrams a client's sendmmsg moves at most; 0
	// means 32.
	Batch int
	// RecvBatch is how many datagrams the server's recvmmsg takes at most;
	// 0 means 64, 1 reads one datagram a call, as a plain recv loop does.
	RecvBatch int
}

// Result is what the server received and what the clients sent.
type Result struct {
	// Elapsed is how long the clients sent.
	Elapsed time.Duration
	// GoodSent and BadSent count the datagrams the kernel took from the
	// good and the bad clients.
	GoodSent, BadSent uint64
	// Good counts the non-empty datagrams the server read, GoodBytes
	// their payload; Empty counts the empty ones it read.
	Good, GoodBytes, Empty uint64
	// RecvCalls counts the recvmmsg calls that returned datagrams.
	RecvCalls uint64
	// SocketDrops is the socket's drop count over the run: datagrams its
	// filter refused plus those that found the receive buffer full.
	SocketDrops uint64
	// BacklogDrops counts the packets the kernel dropped over the run
	// before any socket saw them, its per-CPU input backlog being full
	// (/proc/net/softnet_stat; all of the machine's, loopback's included):
	// on a slow machine (a test VM under emulation) softirqs fall behind.
	BacklogDrops uint64
	// Seq tracks the good datagrams' sequence numbers; nil when the
	// payload is too short to carry one.
	Seq *seqcheck.Tracker
}

// seqLen is the size of the sequence number a good payload starts with.
const seqLen = 8

// stopPoll is how long the server's reads wait before it checks whether
// the clients are done; once they are, a read that waits this long finds
// the socket drained.
const stopPoll = 20 * time.Millisecond

// Run starts the server, then the clients for cfg.Duration, lets the
// server drain its socket, and returns what both sides counted.
func Run(cfg Config) (_ *Result, err error) {
	if cfg.Payload < 1 || cfg.Payload > 65000 {
		return nil, fmt.Errorf("sockfilterbench: payload %d outside [1, 65000]", cfg.Payload)
	}
	if cfg.Bad < 0 || cfg.Duration <= 0 {
		return nil, errors.New("sockfilterbench: need a duration and a non-negative number of bad clients")
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 32
	}
	if cfg.RecvBatch <= 0 {
		cfg.RecvBatch = 64
	}
	// One thread each for the server and the clients, all running at once.
	if want := cfg.Bad + 3; runtime.GOMAXPROCS(0) < want {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(want))
	}
	fd, port, err := Listen(stopPoll)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if cfg.FilterFD != 0 {
		if err := AttachFilter(fd, cfg.FilterFD); err != nil {
			return nil, err
		}
	}
	dropsBefore, err := SocketDrops(fd)
	if err != nil {
		return nil, err
	}
	backlogBefore, err := BacklogDrops()
	if err != nil {
		return nil, err
	}

	res := &Result{}
	if cfg.Payload >= seqLen {
		res.Seq = &seqcheck.Tracker{}
	}
	var stopped atomic.Bool
	served := make(chan error, 1)
	go func() { served <- serve(fd, cfg, res, &stopped) }()

	res.Elapsed, err = runClients(cfg, port, res)
	stopped.Store(true)
	if err := errors.Join(err, <-served); err != nil {
		return nil, err
	}
	dropsAfter, err := SocketDrops(fd)
	if err != nil {
		return nil, err
	}
	res.SocketDrops = uint64(dropsAfter - dropsBefore)
	backlogAfter, err := BacklogDrops()
	if err != nil {
		return nil, err
	}
	res.BacklogDrops = backlogAfter - backlogBefore
	return res, nil
}

// serve reads datagrams until stopped is set and a read then times out.
func serve(fd int, cfg Config, res *Result, stopped *atomic.Bool) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// One byte more than the good payload, so a longer datagram shows.
	m := mmsg.New(cfg.RecvBatch, cfg.Payload+1)
	for {
		last := stopped.Load()
		n, errno := m.Recv(fd, m.Len(), unix.MSG_WAITFORONE)
		switch errno {
		case 0:
		case unix.EAGAIN, unix.EINTR:
			if last {
				return nil
			}
			continue
		default:
			return fmt.Errorf("sockfilterbench: recvmmsg: %w", errno)
		}
		res.RecvCalls++
		for i := range n {
			size := m.Received(i)
			switch size {
			case 0:
				res.Empty++
				continue
			case cfg.Payload:
			default:
				return fmt.Errorf("sockfilterbench: server read a %d-byte datagram, want 0 or %d", size, cfg.Payload)
			}
			res.Good++
			res.GoodBytes += uint64(size)
			if res.Seq != nil {
				res.Seq.Add(binary.LittleEndian.Uint64(m.Bufs[i]))
			}
		}
	}
}

// runClients runs the good client and cfg.Bad bad ones together for
// cfg.Duration and returns how long they sent.
func runClients(cfg Config, port int, res *Result) (time.Duration, error) {
	var (
		wg, ready sync.WaitGroup
		start     = make(chan struct{})
		bad       atomic.Uint64
		errs      = make([]error, cfg.Bad+1)
	)
	for i := range cfg.Bad + 1 {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			size := 0
			if i == 0 {
				size = cfg.Payload
			}
			c, err := newClient(port, size, cfg.Batch)
			ready.Done()
			if err != nil {
				errs[i] = err
				return
			}
			defer unix.Close(c.fd)
			<-start
			sent, err := c.run(time.Now().Add(cfg.Duration))
			errs[i] = err
			if i == 0 {
				res.GoodSent = sent
			} else {
				bad.Add(sent)
			}
		}()
	}
	ready.Wait()
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	res.BadSent = bad.Load()
	return elapsed, errors.Join(errs...)
}

// client sends datagrams of one size on a connected socket.
type client struct {
	fd   int
	m    *mmsg.Vector
	next uint64 // the good client's next sequence number
}

func newClient(port, size, batch int) (*client, error) {
	fd, err := Dial(port)
	if err != nil {
		return nil, err
	}
	return &client{fd: fd, m: mmsg.New(batch, size)}, nil
}

// run sends batch after batch until deadline and returns how many
// datagrams the kernel took.
func (c *client) run(deadline time.Time) (uint64, error) {
	numbered := len(c.m.Bufs[0]) >= seqLen
	for time.Now().Before(deadline) {
		if numbered {
			// Unsent datagrams of the last batch get their numbers again.
			for i, b := range c.m.Bufs {
				binary.LittleEndian.PutUint64(b, c.next+uint64(i))
			}
		}
		n, errno := c.m.Send(c.fd, c.m.Len())
		switch errno {
		case 0:
			c.next += uint64(n)
		case unix.ENOBUFS, unix.EAGAIN, unix.EINTR:
			// Nothing sent this time; try again.
		default:
			return c.next, fmt.Errorf("sockfilterbench: sendmmsg: %w", errno)
		}
	}
	return c.next, nil
}
