//go:build linux

package readers

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// lateBuffers are fakeBuffers on which a record arrives during the first
// publish that finds something to publish: as a ring buffer's producer
// commits one while the kernel still has an older consumer position, and
// so wakes nobody.
type lateBuffers struct {
	*fakeBuffers
	arrived bool
}

func (l *lateBuffers) Publish(i int) {
	if !l.arrived && l.published[i] != l.claimed[i] {
		l.arrived = true
		l.produced[i]++
	}
	l.fakeBuffers.Publish(i)
}

// TestEngineReadinessShowsLateRecords: a record that arrives while a
// read publishes the last record it took wakes nobody, as a ring buffer's
// producer that still saw the older consumer position; the readiness
// descriptor shows it once that read has returned, and the next read
// takes it.
func TestEngineReadinessShowsLateRecords(t *testing.T) {
	p, err := epoll.New()
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeReader{}
	r.bufs = fakeBuffers{e: &r.Engine, produced: []int{1}, claimed: []int{0}, published: []int{0}}
	late := &lateBuffers{fakeBuffers: &r.bufs}
	r.Init(late, p, errFakeFlushed, p.Close, 0)
	t.Cleanup(func() { r.Close(nil) })
	fd, err := r.ReadinessFD()
	if err != nil {
		t.Fatal(err)
	}
	if !bpftest.Readable(t, fd) {
		t.Fatal("not readable with a record to claim")
	}
	r.SetDeadline(time.Now())
	readOne := func() error {
		return r.Read(func(i int, _ bool) (Take, error) {
			if r.bufs.claimed[i] == r.bufs.produced[i] {
				return None, nil
			}
			r.bufs.claimed[i]++
			late.Publish(i) // a copy is published by its claim
			return Copied, nil
		}, nil)
	}
	if err := readOne(); err != nil {
		t.Fatal(err)
	}
	if !bpftest.Readable(t, fd) {
		t.Fatal("not readable with the late record to claim")
	}
	if err := readOne(); err != nil {
		t.Fatalf("reading the late record: %v", err)
	}
	if bpftest.Readable(t, fd) {
		t.Fatal("readable with nothing to claim")
	}
	if err := readOne(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read with nothing to claim: %v, want the deadline", err)
	}
}
