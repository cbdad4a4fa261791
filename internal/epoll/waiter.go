package epoll

import (
	"os"
	"sync"
	"time"
)

// Waiter is where the goroutines of one reader wait, with the rules that
// end a wait (docs/architecture.md); under its owner's mutex.
type Waiter struct {
	mu      *sync.Mutex
	poller  *Poller
	flushed error // the owner's ErrFlushed

	deadline     time.Time
	flushes      uint64 // Flush calls so far
	flushForNext bool   // the next read to find nothing ends with flushed
	active       int    // reads and loops in progress
	inside       int    // those of them not away in their caller's code
	closed       bool
	left         chan struct{} // closed when inside drops to 0

	polling   bool          // a sleeper waits in epoll
	pollWoken bool          // the eventfd was written for it
	sleepers  int           // sleepers waiting on wake
	unbounded int           // sleepers, in epoll or not, with no time limit
	wake      chan struct{} // closed by Wake
}

// NewWaiter returns a Waiter on poller, guarded by mu; flushed is the
// owner's ErrFlushed.
func NewWaiter(mu *sync.Mutex, poller *Poller, flushed error) *Waiter {
	return &Waiter{mu: mu, poller: poller, flushed: flushed}
}

// Ticket is a read's place at a Waiter.
type Ticket struct {
	flushesSeen uint64
	away        bool
}

// Begin counts a read or loop in progress, or returns os.ErrClosed.
func (w *Waiter) Begin(t *Ticket) error {
	if w.closed {
		return os.ErrClosed
	}
	w.active++
	w.inside++
	t.flushesSeen, t.away = w.flushes, false
	return nil
}

// End ends what Begin counted. A read that a Flush covered but that ended
// with a record hands the flush on to the next read that finds nothing.
func (w *Waiter) End(t *Ticket) {
	w.Away(t)
	w.active--
	if t.flushesSeen != w.flushes {
		w.flushForNext = true
	}
}

// Away says that t's goroutine runs its caller's code until Back: Close
// does not wait for it, so that it may call Close.
func (w *Waiter) Away(t *Ticket) {
	if t.away {
		return
	}
	t.away = true
	w.inside--
	if w.inside == 0 {
		broadcast(&w.left)
	}
}

// Back says that t's goroutine is in the reader again.
func (w *Waiter) Back(t *Ticket) {
	if t.away {
		t.away = false
		w.inside++
	}
}

// Active returns how many reads and loops are in progress.
func (w *Waiter) Active() int { return w.active }

// Closed reports whether Close was called.
func (w *Waiter) Closed() bool { return w.closed }

// Idle reports whether no goroutine sleeps.
func (w *Waiter) Idle() bool { return !w.polling && w.sleepers == 0 }

// FlushPending reports whether a Flush waits for the next read that finds
// nothing.
func (w *Waiter) FlushPending() bool { return w.flushForNext }

// Check returns, for t's read that found nothing, how long it may sleep
// (negative: no limit), or the error that ends it.
func (w *Waiter) Check(t *Ticket) (time.Duration, error) {
	switch {
	case w.closed:
		return 0, os.ErrClosed
	case t.flushesSeen != w.flushes || w.flushForNext:
		t.flushesSeen, w.flushForNext = w.flushes, false
		return 0, w.flushed
	case w.deadline.IsZero():
		return -1, nil
	}
	if timeout := time.Until(w.deadline); timeout > 0 {
		return timeout, nil
	}
	return 0, os.ErrDeadlineExceeded
}

// Sleep gives up the mutex until a record may have arrived, Wake is called,
// or timeout passes (negative: no limit). One sleeper waits in epoll, the
// others until it wakes them.
func (w *Waiter) Sleep(timeout time.Duration) {
	if timeout < 0 {
		w.unbounded++
		defer func() { w.unbounded-- }()
	}
	if w.polling {
		w.sleepers++
		w.await(&w.wake, timeout)
		w.sleepers--
		return
	}
	w.polling = true
	w.mu.Unlock()
	w.poller.Wait(timeout) // any error: the caller looks again
	w.mu.Lock()
	w.polling = false
	if w.pollWoken {
		w.poller.Drain()
		w.pollWoken = false
	}
	broadcast(&w.wake) // one of them waits in epoll next
}

func (w *Waiter) await(ch *chan struct{}, timeout time.Duration) {
	if *ch == nil {
		*ch = make(chan struct{})
	}
	c, expired := *ch, (<-chan time.Time)(nil) // nil: never
	if timeout >= 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	w.mu.Unlock()
	select {
	case <-c:
	case <-expired:
	}
	w.mu.Lock()
}

func broadcast(ch *chan struct{}) {
	if *ch != nil {
		close(*ch)
		*ch = nil
	}
}

// Wake makes every sleeper return and look again.
func (w *Waiter) Wake() {
	if w.polling && !w.pollWoken && w.poller.Wake() == nil {
		w.pollWoken = true
	}
	broadcast(&w.wake)
}

// WakeUnbounded wakes the sleepers if one sleeps with no time limit.
func (w *Waiter) WakeUnbounded() {
	if w.unbounded > 0 {
		w.Wake()
	}
}

// SetDeadline sets when waits end with os.ErrDeadlineExceeded (zero: never).
func (w *Waiter) SetDeadline(t time.Time) {
	w.deadline = t
	w.Wake()
}

// Flush makes every read and loop in progress, or with none the next, end
// with the flush error once it finds nothing to read.
func (w *Waiter) Flush() error {
	if w.closed {
		return os.ErrClosed
	}
	w.flushes++
	if w.active == 0 {
		w.flushForNext = true
	}
	w.Wake()
	return nil
}

// Close makes every wait end with os.ErrClosed and returns, giving up the
// mutex meanwhile, once every read and loop has left the reader (End or
// Away), as cilium/ebpf's Close does. Only the first Close waits.
func (w *Waiter) Close() {
	w.closed = true
	w.Wake()
	for w.inside > 0 {
		w.await(&w.left, -1)
	}
}
