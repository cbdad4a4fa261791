package bpftest

import (
	"errors"
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
		time.Sleep(50 * time.Millisecond) // all block
		if n := returned.Load(); n != 0 {
			t.Fatalf("trial %d: %d calls returned before Close", trial, n)
		}
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

// WaitingGoroutines returns the stacks of the goroutines that function
// creator started and that still wait: in the waiter (woken or not), or
// blocked (in a syscall, on a channel, a lock, a timer). A goroutine on
// its way out of a call runs, or is runnable where it was preempted.
func WaitingGoroutines(creator string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var waiting []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "created by "+creator+" in goroutine") && !strings.Contains(g, "created by "+creator+".") {
			continue
		}
		header, frames, _ := strings.Cut(g, "\n")
		_, state, _ := strings.Cut(header, "[")
		top, _, _ := strings.Cut(frames, "(")
		parked := strings.Contains(top, "gopark") || strings.Contains(top, "Semacquire")
		running := strings.HasPrefix(state, "running") || strings.HasPrefix(state, "runnable")
		if parked || !running || strings.Contains(frames, "\n"+waiterPackage) || strings.HasPrefix(frames, waiterPackage) {
			waiting = append(waiting, g)
		}
	}
	return waiting
}
