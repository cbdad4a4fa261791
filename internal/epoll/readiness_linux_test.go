//go:build linux

package epoll

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func readable(t *testing.T, fd int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0 && fds[0].Revents&unix.POLLIN != 0
}

// newWatched returns a Poller with an eventfd registered as a buffer's fd
// would be, the fd, and its Readiness, whose wake sends on the channel
// returned and goes on while keep says so.
func newWatched(t *testing.T, keep func() bool) (*Poller, int, *Readiness, <-chan struct{}) {
	t.Helper()
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	source, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(source) })
	if err := p.AddEdgeTriggered(source); err != nil {
		t.Fatal(err)
	}
	woken := make(chan struct{}, 16)
	rd, err := p.NewReadiness(func() bool {
		woken <- struct{}{}
		return keep()
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.NewReadiness(func() bool { return true }); err == nil {
		t.Fatal("a second Readiness was made")
	}
	return p, source, rd, woken
}

func signal(t *testing.T, fd int) {
	t.Helper()
	one := [8]byte{1}
	if _, err := unix.Write(fd, one[:]); err != nil {
		t.Fatal(err)
	}
}

func wokenWithin(t *testing.T, woken <-chan struct{}, d time.Duration) bool {
	t.Helper()
	select {
	case <-woken:
		return true
	case <-time.After(d):
		return false
	}
}

// TestReadinessIsWhatItsOwnerSets: the descriptor is readable exactly
// while its owner says so, however often it is polled and whatever the
// registered fds do; it is non-blocking, for os.NewFile.
func TestReadinessIsWhatItsOwnerSets(t *testing.T) {
	_, source, rd, _ := newWatched(t, func() bool { return true })
	fd := rd.FD()
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK == 0 {
		t.Fatalf("readiness fd flags %#x, %v: want O_NONBLOCK, for os.NewFile", flags, err)
	}
	if readable(t, fd) {
		t.Fatal("readable before Set")
	}
	signal(t, source)
	time.Sleep(10 * time.Millisecond)
	if readable(t, fd) {
		t.Fatal("readable because a registered fd is: only the owner says")
	}
	for range 2 { // a second Set changes nothing
		if err := rd.Set(true); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if !readable(t, fd) {
			t.Fatal("not readable after Set(true)")
		}
	}
	if err := rd.Set(false); err != nil {
		t.Fatal(err)
	}
	if readable(t, fd) {
		t.Fatal("readable after Set(false)")
	}
}

// TestReadinessWatcherHearsWakeUps: each wake-up of a registered fd calls
// the owner back once, after the first as much as after the tenth, and
// nothing calls it while nothing happens.
func TestReadinessWatcherHearsWakeUps(t *testing.T) {
	_, source, _, woken := newWatched(t, func() bool { return true })
	if wokenWithin(t, woken, 20*time.Millisecond) {
		t.Fatal("woken with no wake-up")
	}
	for i := range 10 {
		signal(t, source) // edge-triggered: every write is a new edge
		if !wokenWithin(t, woken, 5*time.Second) {
			t.Fatalf("wake-up %d did not reach the owner", i)
		}
	}
	if wokenWithin(t, woken, 20*time.Millisecond) {
		t.Fatal("woken again with no new wake-up")
	}
}

// TestReadinessPollIn: a poll asked for calls the owner back without a
// wake-up, once; an earlier poll asked later wins.
func TestReadinessPollIn(t *testing.T) {
	_, _, rd, woken := newWatched(t, func() bool { return true })
	start := time.Now()
	rd.PollIn(time.Hour)
	rd.PollIn(5 * time.Millisecond)
	if !wokenWithin(t, woken, 5*time.Second) {
		t.Fatal("the poll never came")
	}
	if since := time.Since(start); since > time.Second {
		t.Fatalf("the poll came after %v: the later, earlier poll did not win", since)
	}
	if wokenWithin(t, woken, 30*time.Millisecond) {
		t.Fatal("polled again without being asked")
	}
}

// TestReadinessWatcherStops: the watcher ends when its owner says so, and
// when Close ends its wait; Close closes the descriptor.
func TestReadinessWatcherStops(t *testing.T) {
	t.Run("owner", func(t *testing.T) {
		_, source, rd, woken := newWatched(t, func() bool { return false })
		signal(t, source)
		if !wokenWithin(t, woken, 5*time.Second) {
			t.Fatal("not woken")
		}
		select {
		case <-rd.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the watcher goes on after its owner said stop")
		}
	})
	t.Run("Close", func(t *testing.T) {
		p, _, rd, _ := newWatched(t, func() bool { return true })
		fd := rd.FD()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-rd.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the watcher goes on after Close")
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			t.Fatalf("the descriptor is still open after Close: %v", err)
		}
	})
}
