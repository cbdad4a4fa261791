//go:build linux

package readers

import (
	"errors"
	"os"
	"testing"
	"time"

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

// TestEngineReadinessLooksAfterPublish: while the readiness descriptor is
// out, a read that finds nothing looks again after it published, so that
// it takes a record that arrived meanwhile and woke nobody, which an
// event loop waiting on the descriptor would never be told of; without
// the descriptor a read ends at its deadline as before.
func TestEngineReadinessLooksAfterPublish(t *testing.T) {
	for _, readiness := range []bool{false, true} {
		p, err := epoll.New()
		if err != nil {
			t.Fatal(err)
		}
		r := &fakeReader{}
		r.bufs = fakeBuffers{e: &r.Engine, produced: []int{2}, claimed: []int{0}, published: []int{0}}
		r.Init(&lateBuffers{fakeBuffers: &r.bufs}, p, errFakeFlushed, p.Close, 0)
		t.Cleanup(func() { r.Close(nil) })
		if readiness {
			if _, err := r.ReadinessFD(false); err != nil {
				t.Fatal(err)
			}
		}
		r.SetDeadline(time.Now())
		got, err := r.loop(nil, nil)
		want := 2
		if readiness {
			want = 3
		}
		if got != want || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("readiness %v: %d records, %v; want %d, then the deadline", readiness, got, err, want)
		}
	}
}
