//go:build linux

package readers

import (
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// The engine's rules, tested once for both readers on buffers of counted
// records with no kernel behind them: records are produced by a test
// under Mu, and a batch claims all that one buffer holds.

var errFakeFlushed = errors.New("flushed")

type fakeBuffers struct {
	e         *Engine
	produced  []int // records produced, per buffer
	claimed   []int // records claimed
	published []int // records the "kernel" was told of
}

func (f *fakeBuffers) Len() int         { return len(f.produced) }
func (f *fakeBuffers) Publish(i int)    { f.published[i] = f.claimed[i] }
func (f *fakeBuffers) Ready(i int) bool { return f.produced[i] > f.claimed[i] }
func (f *fakeBuffers) Err(int) error    { return nil }

// fakeBatch is a loop's batch: all of one buffer's records.
type fakeBatch struct {
	f       *fakeBuffers
	buffer  int
	records int
	holding bool
}

func (b *fakeBatch) Release(bool) (i, ended int, stalled bool) {
	if !b.holding {
		return 0, 0, false
	}
	b.holding = false
	return b.buffer, 1, false
}

func (b *fakeBatch) Claim(i int, _ bool) (Take, error) {
	f := b.f
	if f.produced[i] == f.claimed[i] {
		return None, nil
	}
	b.buffer, b.records, b.holding = i, f.produced[i]-f.claimed[i], true
	f.claimed[i] = f.produced[i]
	return Held, nil
}

type fakeReader struct {
	Engine
	bufs  fakeBuffers
	frees atomic.Int32
}

func newFakeReader(t *testing.T, buffers int, heldClaimPoll time.Duration) *fakeReader {
	t.Helper()
	p, err := epoll.New()
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeReader{}
	r.bufs = fakeBuffers{e: &r.Engine, produced: make([]int, buffers), claimed: make([]int, buffers), published: make([]int, buffers)}
	r.Init(&r.bufs, p, errFakeFlushed, func() error {
		r.frees.Add(1)
		return p.Close()
	}, heldClaimPoll)
	t.Cleanup(func() { r.Close(nil) })
	return r
}

// produce adds n records to buffer i, waking nobody (as a producer that
// asks for no wake-up): only a poll or a wake finds them.
func (r *fakeReader) produce(i, n int) {
	r.mu.Lock()
	r.bufs.produced[i] += n
	r.mu.Unlock()
}

// waitInProgress waits until n reads and loops are in progress.
func (r *fakeReader) waitInProgress(t *testing.T, n int) {
	t.Helper()
	for giveUp := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		active := r.InProgress()
		if active >= n {
			return
		}
		if time.Now().After(giveUp) {
			t.Fatalf("%d reads and loops in progress, want %d", active, n)
		}
	}
}

// wake wakes the waiters, as a producer's wake-up would.
func (r *fakeReader) wake() {
	r.mu.Lock()
	r.wait.Wake()
	r.mu.Unlock()
}

// loop runs a loop, calling body for each batch until it returns false,
// and returns the records it got and the error that ended it, if any;
// ended, if not nil, gets the error inside the loop's last body.
func (r *fakeReader) loop(body func(records int) bool, ended chan<- error) (int, error) {
	b := &fakeBatch{f: &r.bufs}
	got := 0
	var end error
	r.Loop(b, func(err error) bool {
		if err != nil {
			end = err
			if ended != nil {
				ended <- err
			}
			return false
		}
		got += b.records
		return body == nil || body(b.records)
	})
	return got, end
}

func endsWithin(t *testing.T, d time.Duration, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(d):
		t.Fatalf("%s still waiting after %v", what, d)
		return nil
	}
}

// TestEngineFlushEndsEveryWait: Flush ends every loop waiting when it is
// called, after the records there are, and with nobody waiting the next
// loop that finds nothing.
func TestEngineFlushEndsEveryWait(t *testing.T) {
	r := newFakeReader(t, 2, 0)
	const loops = 3
	ended := make(chan error, loops)
	for range loops {
		go func() { _, err := r.loop(nil, nil); ended <- err }()
	}
	r.waitInProgress(t, loops) // a loop begun after the Flush is not its
	r.produce(1, 5)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	for range loops {
		if err := endsWithin(t, 5*time.Second, "a flushed loop", ended); !errors.Is(err, errFakeFlushed) {
			t.Fatalf("flushed loop ended with %v", err)
		}
	}
	if r.bufs.claimed[1] != 5 || r.bufs.published[1] != 5 {
		t.Errorf("after Flush: %d records claimed, %d published; want the 5 produced", r.bufs.claimed[1], r.bufs.published[1])
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.loop(nil, nil); !errors.Is(err, errFakeFlushed) {
		t.Errorf("a Flush with nobody waiting did not end the next loop: %v", err)
	}
}

// TestEngineDeadline: a deadline ends a waiting loop, also one set while
// it waits, and the zero time lifts it.
func TestEngineDeadline(t *testing.T) {
	r := newFakeReader(t, 1, 0)
	ended := make(chan error, 1)
	go func() { _, err := r.loop(nil, nil); ended <- err }()
	time.Sleep(20 * time.Millisecond)
	r.SetDeadline(time.Now().Add(10 * time.Millisecond))
	if err := endsWithin(t, 5*time.Second, "a loop past its deadline", ended); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("loop ended with %v, want os.ErrDeadlineExceeded", err)
	}
	r.SetDeadline(time.Time{})
	go func() { _, err := r.loop(nil, nil); ended <- err }()
	select {
	case err := <-ended:
		t.Fatalf("a loop with no deadline ended: %v", err)
	case <-time.After(30 * time.Millisecond):
	}
	r.Close(nil)
	<-ended
}

// TestEngineHeldClaimPoll: while a loop's body holds a batch, a waiter
// polls at the held-claim bound, since the kernel wakes only a reader that
// caught up; with no claim held it sleeps until woken.
func TestEngineHeldClaimPoll(t *testing.T) {
	r := newFakeReader(t, 2, 2*time.Millisecond)
	hold, release := make(chan struct{}), make(chan struct{})
	go r.loop(func(int) bool { close(hold); <-release; return false }, nil)
	r.produce(0, 1)
	r.wake()
	<-hold
	got := make(chan int, 1)
	go r.loop(func(n int) bool { got <- n; return false }, nil)
	time.Sleep(20 * time.Millisecond)
	r.produce(1, 3) // wakes nobody: only the poll finds it
	select {
	case n := <-got:
		if n != 3 {
			t.Errorf("the polling loop got %d records, want 3", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("records produced without a wake-up were not found while a claim was held")
	}
	close(release)
}

// TestEngineCloseFromBody: a body that calls Close, while another loop
// waits, gets Close back once that loop has left the engine to hand its
// body ErrClosed; its own loop ends with ErrClosed at its next step, and
// the resources are freed once, when the last loop is out.
func TestEngineCloseFromBody(t *testing.T) {
	r := newFakeReader(t, 1, 0)
	waiterEnded := make(chan error, 1)
	go r.loop(nil, waiterEnded)
	r.waitInProgress(t, 1)
	var stillWaiting []string
	var freesAtClose int32
	closerDone := make(chan error, 1)
	go func() {
		_, end := r.loop(func(int) bool {
			if err := r.Close(nil); err != nil {
				t.Error(err)
			}
			stillWaiting = bpftest.WaitingGoroutines("github.com/ebpf-zc/ebpf/internal/readers.TestEngineCloseFromBody")
			freesAtClose = r.frees.Load()
			return true
		}, nil)
		closerDone <- end
	}()
	// The waiter or the closer takes the records: produce until the
	// closer has had some.
	var end error
	for deadline := time.Now().Add(5 * time.Second); ; {
		r.produce(0, 1)
		r.wake()
		select {
		case end = <-closerDone:
		case <-time.After(time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the closing loop never got a batch")
			}
			continue
		}
		break
	}
	if !errors.Is(end, os.ErrClosed) {
		t.Errorf("the closing loop ended with %v, want os.ErrClosed", end)
	}
	if stillWaiting != nil {
		t.Errorf("when Close from a body returned, the other loop still waited:\n%s", strings.Join(stillWaiting, "\n"))
	}
	if err := endsWithin(t, 5*time.Second, "the waiting loop after Close", waiterEnded); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the waiting loop ended with %v, want os.ErrClosed", err)
	}
	if freesAtClose != 0 {
		t.Error("resources freed while a body held a batch")
	}
	if n := r.frees.Load(); n != 1 {
		t.Errorf("resources freed %d times, want once when the last loop was out", n)
	}
}

// TestEngineLastOneOutFrees: Close with loops in their bodies frees
// nothing; the last loop to end frees once, and Close waits for no body.
func TestEngineLastOneOutFrees(t *testing.T) {
	r := newFakeReader(t, 2, 0)
	const loops = 2
	inBody, release := make(chan struct{}, loops), make(chan struct{})
	var wg sync.WaitGroup
	for i := range loops {
		r.produce(i, 1)
	}
	for range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.loop(func(int) bool { inBody <- struct{}{}; <-release; return true }, nil)
		}()
	}
	for range loops {
		<-inBody
	}
	closed := make(chan error, 1)
	go func() { closed <- r.Close(nil) }()
	if err := endsWithin(t, 5*time.Second, "Close with loops in their bodies", closed); err != nil {
		t.Fatal(err)
	}
	if n := r.frees.Load(); n != 0 {
		t.Fatalf("resources freed %d times while bodies held batches", n)
	}
	close(release)
	wg.Wait()
	if n := r.frees.Load(); n != 1 {
		t.Errorf("resources freed %d times after the last loop ended, want 1", n)
	}
}
