package bpftest

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// CheckCloseBarrier checks, trials times, that a reader's or writer's
// Close returns only once every call blocked in it has returned with
// os.ErrClosed, as cilium/ebpf's Close does: open makes a fresh one and
// returns a call that blocks until Close, and Close; callers goroutines
// make the call at once.
func CheckCloseBarrier(t *testing.T, trials, callers int, open func(t *testing.T) (call, closeIt func() error)) {
	t.Helper()
	for trial := range trials {
		call, closeIt := open(t)
		var returned atomic.Int32
		errs := make(chan error, callers)
		for range callers {
			go func() {
				err := call()
				returned.Add(1)
				errs <- err
			}()
		}
		// Close covers the calls that are in the reader, not those still
		// on their way in (on a slow CPU, at its mutex): wait for all.
		WaitAsleepInWaiter(t, "github.com/ebpf-zc/ebpf/internal/bpftest.CheckCloseBarrier", callers, func() string {
			if n := returned.Load(); n != 0 {
				return fmt.Sprintf("trial %d: %d calls returned before Close", trial, n)
			}
			return ""
		})
		if err := closeIt(); err != nil {
			t.Fatal(err)
		}
		// A call that released the reader may not have reached its
		// caller's next statement yet, on a loaded machine: it must be
		// on its way out, not waiting.
		if waiting := WaitingGoroutines("github.com/ebpf-zc/ebpf/internal/bpftest.CheckCloseBarrier"); waiting != nil {
			t.Fatalf("trial %d: when Close returned, %d of %d blocked calls had returned, and %d still wait:\n%s",
				trial, returned.Load(), callers, len(waiting), strings.Join(waiting, "\n"))
		}
		for range callers {
			select {
			case err := <-errs:
				if !errors.Is(err, os.ErrClosed) {
					t.Fatalf("trial %d: blocked call returned %v, want ErrClosed", trial, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("trial %d: a blocked call had returned, but sent nothing", trial)
			}
		}
	}
}

// waiterPackage is the package of the waiter every read sleeps in, as its
// functions appear in a stack: a goroutine with a frame there has not
// left the reader's wait.
var waiterPackage = func() string {
	name := runtime.FuncForPC(reflect.ValueOf(epoll.NewWaiter).Pointer()).Name()
	return name[:strings.LastIndex(name, ".")+1]
}()

// asleepTimeout bounds WaitAsleepInWaiter: a call reaches the waiter in
// microseconds, and in well under a second on an emulated CPU that two
// VMs share; one that takes this long is not on its way.
const asleepTimeout = 30 * time.Second

// WaitAsleepInWaiter waits until n goroutines that function creator started
// sleep in the waiter (AsleepInWaiter): calls that have entered the reader
// or writer, so that its Close must wait for them. A fixed pause is not
// enough on an emulated CPU, where a goroutine may still be queued at the
// reader's mutex after it. It fails t at once if failed, checked at every
// look, returns a reason (a call that returned instead of blocking), or
// after asleepTimeout.
func WaitAsleepInWaiter(t *testing.T, creator string, n int, failed func() string) {
	t.Helper()
	giveUp := time.Now().Add(asleepTimeout)
	for {
		if why := failed(); why != "" {
			t.Fatal(why)
		}
		asleep := AsleepInWaiter(creator)
		if len(asleep) >= n {
			return
		}
		if time.Now().After(giveUp) {
			t.Fatalf("after %v, %d of %d calls sleep in the waiter; the goroutines %s started:\n%s",
				asleepTimeout, len(asleep), n, creator, strings.Join(stacksOf(creator), "\n"))
		}
		time.Sleep(time.Millisecond)
	}
}

// AsleepInWaiter returns the stacks of the goroutines that function
// creator started and that sleep in the waiter: parked, or blocked in
// epoll_wait, with a frame in its package. Such a call has begun in the
// reader or writer, which counts it until it leaves.
func AsleepInWaiter(creator string) []string {
	var asleep []string
	for _, g := range goroutinesOf(creator) {
		if g.inWaiter && !g.running {
			asleep = append(asleep, g.stack)
		}
	}
	return asleep
}

// WaitingGoroutines returns the stacks of the goroutines that function
// creator started and that still wait: in the waiter (woken or not), or
// blocked (in a syscall, on a channel, a lock, a timer). A goroutine on
// its way out of a call runs, or is runnable where it was preempted.
func WaitingGoroutines(creator string) []string {
	var waiting []string
	for _, g := range goroutinesOf(creator) {
		if g.parked || !g.running || g.inWaiter {
			waiting = append(waiting, g.stack)
		}
	}
	return waiting
}

// goroutineState is one goroutine of a runtime.Stack dump.
type goroutineState struct {
	stack string
	// running: its state is running or runnable; parked: its top frame
	// parks it (a state name can lag); inWaiter: a frame is in the
	// waiter's package.
	running, parked, inWaiter bool
}

// goroutinesOf returns the goroutines that function creator started.
func goroutinesOf(creator string) []goroutineState {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var gs []goroutineState
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "created by "+creator+" in goroutine") && !strings.Contains(g, "created by "+creator+".") {
			continue
		}
		header, frames, _ := strings.Cut(g, "\n")
		_, state, _ := strings.Cut(header, "[")
		top, _, _ := strings.Cut(frames, "(")
		gs = append(gs, goroutineState{
			stack:    g,
			running:  strings.HasPrefix(state, "running") || strings.HasPrefix(state, "runnable"),
			parked:   strings.Contains(top, "gopark") || strings.Contains(top, "Semacquire"),
			inWaiter: strings.Contains(frames, "\n"+waiterPackage) || strings.HasPrefix(frames, waiterPackage),
		})
	}
	return gs
}

// stacksOf returns the stacks of every goroutine that creator started.
func stacksOf(creator string) []string {
	var stacks []string
	for _, g := range goroutinesOf(creator) {
		stacks = append(stacks, g.stack)
	}
	return stacks
}
