//go:build linux

package perf

import (
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestIdleWaitersAndClose: three waiters (a Records loop, a Batches loop,
// a ReadInto loop) are woken by records and by a deadline set and removed, then wait
// on idle buffers: the process must stay under 5 % of a CPU. Close ends
// them with ErrClosed and gives back every fd and mapping the reader had.
func TestIdleWaitersAndClose(t *testing.T) {
	m := newEventArray(t)
	p := newProducer(t, m, 32)
	before := bpftest.OpenResources(t)
	r, err := NewReader(m, 1<<16)
	bpftest.SkipIfNoPerfEventArray(t, err)
	bpftest.CheckOpened(t, before, "a new Reader")

	ended := idleWaiters(r)
	time.Sleep(20 * time.Millisecond)
	for _, cpu := range bpftest.CPUs(t) {
		runOn(t, p, cpu, 100)
	}
	r.SetDeadline(time.Now().Add(time.Hour))
	r.SetDeadline(time.Time{})
	bpftest.CheckIdleWaiters(t, "three waiters", 3, ended, r.Close, ErrClosed)
	bpftest.CheckNoLeaks(t, before, "a closed Reader")
}

// idleWaiters starts the three waiters of the idle tests on r, a Records
// loop, a Batches loop and a ReadInto loop, and returns where each sends
// the error that ends it.
func idleWaiters(r *Reader) chan error {
	ended := make(chan error, 3)
	go func() { ended <- bpftest.LoopUntilError(r.Records()) }()
	go func() { ended <- bpftest.LoopUntilError(batchRecords(r)) }() // every sample read
	go func() { ended <- bpftest.ReadUntilError(r.ReadInto) }()
	return ended
}
