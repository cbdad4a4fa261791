package epoll

import (
	"os"
	"sync"
	"time"
)

// Waiter is where the goroutines of one reader wait: the rules that end a
// wait (Close, Flush, the deadline) and the sleep itself, every method
// under its owner's mutex (docs/architecture.md, "Waiter").
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
	left         chan struct{} // closed when inside drops to 0; made by Close

	polling   bool          // a sleeper waits in epoll
	pollWoken bool          // the eventfd was written for it
	sleepers  int           // sleepers waiting on wake
	unbounded int           // sleepers, in epoll or not, with no time limit
	wake      chan struct{} // closed by Wake; made by the first sleeper after
}

// NewWaiter returns a Waiter on poller, guarded by mu; flushed is the
// owner's ErrFlushed.
func NewWaiter(mu *sync.Mutex, poller *Poller, flushed error) *Waiter {
	return &Waiter{mu: mu, poller: poller, flushed: flushed}
}

// Ticket is a read's place at a Waiter: the Flush calls it has seen, and
// whether its goroutine is away, running its caller's code.
type Ticket struct {
	flushesSeen uint64
	away        bool
}

// Begin counts a read or loop in progress, inside the reader until Away,
// or returns os.ErrClosed.
func (w *Waiter) Begin(t *Ticket) error {
	if w.closed {
		return os.ErrClosed
	}
	w.active++
	w.inside++
	t.flushesSeen, t.away = w.flushes, false
	return nil
}

// End ends what Begin counted. A read that a Flush covered and that found
// records hands the flush on to the next read that finds nothing.
func (w *Waiter) End(t *Ticket) {
	w.Away(t)
	w.active--
	if t.flushesSeen != w.flushes {
		w.flushForNext = true
	}
}

// Away says that t's goroutine runs its caller's code (a loop's body, a
// lease's function) until Back: Close does not wait for it there, so that
// it may call Close.
func (w *Waiter) Away(t *Ticket) {
	if t.away {
		return
	}
	t.away = true
	w.inside--
	if w.inside == 0 && w.left != nil {
		close(w.left)
		w.left = nil
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

// Idle reports whether no goroutine sleeps (the poller may be closed).
func (w *Waiter) Idle() bool { return !w.polling && w.sleepers == 0 }

// Check is called by t's read once it found nothing: how long it may
// sleep (negative: no limit), or the error that ends it.
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

// Sleep gives up the mutex until a record may have arrived, Wake is
// called, or timeout passes (negative: no limit).
func (w *Waiter) Sleep(timeout time.Duration) {
	if timeout < 0 {
		w.unbounded++
		defer func() { w.unbounded-- }()
	}
	if !w.polling {
		w.polling = true
		w.mu.Unlock()
		w.poller.Wait(timeout) // any error: the caller looks again
		w.mu.Lock()
		w.polling = false
		if w.pollWoken {
			w.poller.Drain()
			w.pollWoken = false
		}
		w.wakeSleepers() // one of them waits in epoll next
		return
	}
	if w.wake == nil {
		w.wake = make(chan struct{})
	}
	wake := w.wake
	w.sleepers++
	w.mu.Unlock()
	if timeout < 0 {
		<-wake
	} else {
		timer := time.NewTimer(timeout)
		select {
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
	w.mu.Lock()
	w.sleepers--
}

// Wake makes every sleeper return and look again.
func (w *Waiter) Wake() {
	if w.polling && !w.pollWoken {
		if w.poller.Wake() == nil {
			w.pollWoken = true
		}
	}
	w.wakeSleepers()
}

func (w *Waiter) wakeSleepers() {
	if w.wake != nil {
		close(w.wake)
		w.wake = nil
	}
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

// Flush makes every read and loop in progress, or with none the next,
// end with the flush error once it finds nothing to read.
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

// Close makes every wait end with os.ErrClosed, and returns once every
// read and loop in the reader has left it (End or Away), giving up the
// mutex meanwhile: a caller of Close may rely on every blocked call
// having returned, as on cilium/ebpf's. Only the first Close waits.
func (w *Waiter) Close() {
	w.closed = true
	w.Wake()
	for w.inside > 0 {
		if w.left == nil {
			w.left = make(chan struct{})
		}
		left := w.left
		w.mu.Unlock()
		<-left
		w.mu.Lock()
	}
}

// FlushPending reports whether a Flush waits for the next read that
// finds nothing: a flush taken by reads in progress is theirs alone.
func (w *Waiter) FlushPending() bool { return w.flushForNext }
