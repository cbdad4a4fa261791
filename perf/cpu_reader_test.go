//go:build linux

package perf

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// TestCPUReaders: a Reader per CPU, each read by a goroutine of its own,
// gets its CPU's records and only those, with a readiness descriptor of
// its own; closing one removes its CPU's entry alone.
func TestCPUReaders(t *testing.T) {
	cpus := bpftest.CPUs(t)
	if len(cpus) < 2 {
		t.Skipf("one CPU online (%v): a reader per CPU needs two", cpus)
	}
	m := newEventArray(t)
	p := newProducer(t, m, 16)
	readers := make([]*Reader, 2)
	fds := make([]int, 2)
	for i := range readers {
		r, err := NewCPUReader(m, cpus[i], 1<<14, ReaderOptions{})
		bpftest.SkipIfNoPerfEventArray(t, err)
		t.Cleanup(func() { r.Close() })
		readers[i] = r
		if fds[i], err = r.ReadinessFD(); err != nil {
			t.Fatal(err)
		}
	}
	if fds[0] == fds[1] {
		t.Fatal("two CPU readers share a readiness descriptor")
	}
	const n = 50
	runOn(t, p, cpus[1], n)
	bpftest.EventuallyReadable(t, fds[1], "for the records of its CPU")
	if bpftest.Readable(t, fds[0]) {
		t.Fatal("the other CPU's reader is readable: it got no record")
	}
	runOn(t, p, cpus[0], n)
	var wg sync.WaitGroup
	got := make([][]int, 2)
	for i, r := range readers {
		wg.Go(func() {
			r.SetDeadline(time.Now().Add(5 * time.Second))
			for rec, err := range r.Records() {
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = append(got[i], rec.CPU)
				if len(got[i]) == n {
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range readers {
		if len(got[i]) != n {
			t.Fatalf("the reader of CPU %d got %d records, want %d", cpus[i], len(got[i]), n)
		}
		for _, cpu := range got[i] {
			if cpu != cpus[i] {
				t.Fatalf("the reader of CPU %d got a record of CPU %d", cpus[i], cpu)
			}
		}
	}
	if err := readers[0].Close(); err != nil {
		t.Fatal(err)
	}
	_, droppedBefore, err := p.Counts()
	if err != nil {
		t.Fatal(err)
	}
	runOn(t, p, cpus[0], 1) // its entry is gone: the write fails
	runOn(t, p, cpus[1], 1)
	if _, dropped, _ := p.Counts(); dropped != droppedBefore+1 {
		t.Fatalf("%d writes failed after one CPU's reader closed, want 1", dropped-droppedBefore)
	}
	readers[1].SetDeadline(time.Now())
	if rec, err := readers[1].Read(); err != nil || rec.CPU != cpus[1] {
		t.Fatalf("the open CPU reader: %+v, %v; want a record of CPU %d", rec, err, cpus[1])
	}
}

// TestCPUReaderRefused: a CPU the array has no entry for is refused.
func TestCPUReaderRefused(t *testing.T) {
	m := newEventArray(t)
	for _, cpu := range []int{-1, int(m.MaxEntries())} {
		if _, err := NewCPUReader(m, cpu, 4096, ReaderOptions{}); err == nil || errors.Is(err, ErrClosed) {
			t.Errorf("NewCPUReader on CPU %d: %v, want an error naming the CPU", cpu, err)
		}
	}
}
