//go:build linux

package epoll

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

var errFlushed = errors.New("flushed")

func newTestWaiter(t *testing.T) (*Waiter, *sync.Mutex) {
	t.Helper()
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	mu := new(sync.Mutex)
	return NewWaiter(mu, p, errFlushed), mu
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sleepUntil runs n goroutines that each sleep on w until done() says so,
// counting their returns from Sleep.
func sleepUntil(w *Waiter, mu *sync.Mutex, n int, done func() bool) (wakes *int, wg *sync.WaitGroup) {
	wakes, wg = new(int), new(sync.WaitGroup)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			for !done() {
				w.Sleep(-1)
				*wakes++
			}
		}()
	}
	return wakes, wg
}

// TestWakeConsumedOnce: after a wake, sleepers that find nothing to do go
// back to sleep and stay asleep: the wake-up is not left pending.
func TestWakeConsumedOnce(t *testing.T) {
	w, mu := newTestWaiter(t)
	stop := false
	wakes, wg := sleepUntil(w, mu, 4, func() bool { return stop })
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	w.Wake()
	mu.Unlock()
	// Every sleeper returns once and goes back to sleep.
	for give := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := *wakes
		mu.Unlock()
		if n >= 4 {
			break
		}
		if time.Now().After(give) {
			t.Fatalf("%d of 4 sleepers returned after Wake", n)
		}
	}
	time.Sleep(10 * time.Millisecond)

	mu.Lock()
	before := *wakes
	mu.Unlock()
	cpu := processCPU()
	time.Sleep(300 * time.Millisecond)
	used := processCPU() - cpu
	mu.Lock()
	after := *wakes
	stop = true
	w.Wake()
	mu.Unlock()
	wg.Wait()

	if after != before {
		t.Errorf("%d returns from Sleep with nothing woken", after-before)
	}
	if used > 15*time.Millisecond {
		t.Errorf("four idle sleepers used %v of CPU in 300 ms", used)
	}
}

// TestEverySleeperWakes: Wake reaches the one in epoll and the ones on the
// channel, and Close ends them for good.
func TestEverySleeperWakes(t *testing.T) {
	w, mu := newTestWaiter(t)
	released := 0
	wakes, wg := sleepUntil(w, mu, 3, func() bool {
		if w.Closed() {
			released++
			return true
		}
		return false
	})
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	if w.Idle() {
		t.Error("three sleepers, but the waiter says nobody sleeps")
	}
	w.Close()
	mu.Unlock()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake every sleeper")
	}
	if released != 3 || *wakes != 3 {
		t.Fatalf("%d sleepers ended after %d wakes, want 3 and 3", released, *wakes)
	}
	if !w.Idle() {
		t.Fatal("waiter not idle after every sleeper left")
	}
}

func TestCheck(t *testing.T) {
	w, mu := newTestWaiter(t)
	mu.Lock()
	defer mu.Unlock()
	var a, b Ticket
	if err := w.Begin(&a); err != nil {
		t.Fatal(err)
	}
	if d, err := w.Check(&a); d >= 0 || err != nil {
		t.Fatalf("no deadline: %v %v", d, err)
	}
	w.SetDeadline(time.Now().Add(-time.Second))
	if _, err := w.Check(&a); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past deadline: %v", err)
	}
	w.SetDeadline(time.Time{})
	// Flush with two reads in progress ends each one's wait once, however
	// often the other checks.
	w.Begin(&b)
	w.Flush()
	if _, err := w.Check(&a); err != errFlushed {
		t.Fatalf("after Flush: %v", err)
	}
	if _, err := w.Check(&a); err != nil {
		t.Fatalf("the same read again after Flush: %v", err)
	}
	w.End(&a)
	w.Begin(&a) // a read that begins after the Flush
	if _, err := w.Check(&a); err != nil {
		t.Fatalf("a read begun after Flush: %v", err)
	}
	if _, err := w.Check(&b); err != errFlushed {
		t.Fatalf("the second read after Flush: %v", err)
	}
	w.End(&a)
	w.End(&b)
	// Flush with nobody in progress ends the next read that checks.
	w.Flush()
	w.Begin(&a)
	w.Begin(&b)
	if _, err := w.Check(&b); err != errFlushed {
		t.Fatalf("the next read after a Flush that found nobody: %v", err)
	}
	if _, err := w.Check(&a); err != nil {
		t.Fatalf("a second read after a Flush that found nobody: %v", err)
	}
	w.End(&a)
	w.End(&b)
	// A read that Flush covered and that ends with records hands the flush
	// on to the next read that finds nothing.
	w.Begin(&a)
	w.Flush()
	w.End(&a)
	w.Begin(&b)
	if _, err := w.Check(&b); err != errFlushed {
		t.Fatalf("the read after a flushed one that found records: %v", err)
	}
	w.End(&b)
	w.Close()
	if _, err := w.Check(&a); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if err := w.Begin(&a); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Begin after Close: %v", err)
	}
}

// TestSleepTimesOut: a bounded sleep returns by itself, in epoll or not.
func TestSleepTimesOut(t *testing.T) {
	w, mu := newTestWaiter(t)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			w.Sleep(10 * time.Millisecond)
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("bounded sleeps did not return")
	}
}

// TestCloseWaitsForThoseInside: Close returns once every read in progress
// has ended, but does not wait for one away in its caller's code, nor for
// reads begun after it; a read back from away is waited for again.
func TestCloseWaitsForThoseInside(t *testing.T) {
	w, mu := newTestWaiter(t)
	var inside, away, back Ticket
	mu.Lock()
	w.Begin(&inside)
	w.Begin(&away)
	w.Away(&away)
	w.Begin(&back)
	w.Away(&back)
	mu.Unlock()
	closed := make(chan struct{})
	go func() {
		mu.Lock()
		w.Close()
		mu.Unlock()
		close(closed)
	}()
	ended := func(what string) {
		t.Helper()
		select {
		case <-closed:
			t.Fatalf("Close returned before %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
	ended("the read inside ended")
	mu.Lock()
	w.Back(&back) // comes back while Close waits
	w.End(&inside)
	mu.Unlock()
	ended("the read that came back ended")
	mu.Lock()
	if err := w.Begin(new(Ticket)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Begin while Close waits: %v, want os.ErrClosed", err)
	}
	w.End(&back)
	mu.Unlock()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waits with only a read away left")
	}
	mu.Lock()
	w.End(&away)
	mu.Unlock()
}
