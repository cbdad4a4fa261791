//go:build linux

package rawring

import (
	"errors"
	"testing"
)

// drainLease reads want samples in one lease, committing when the ring
// looks empty and at the end, as the benchmark does.
func drainLease(rd *RawReader, want int, all bool) (sum uint64, err error) {
	err = rd.WithLease(func(l Lease) error {
		defer l.Commit()
		for got := 0; got < want; {
			sample, remain, err := l.ReadSample()
			if err != nil {
				return err
			}
			if sample != nil {
				sum += Touch(sample, all)
				got++
			}
			if remain == 0 {
				l.Commit()
			}
		}
		return nil
	})
	return sum, err
}

// Only Commit publishes: samples read in a lease stay the kernel's
// business until then.
func TestLeaseCommit(t *testing.T) {
	f := newFakeRing(t, 4096)
	f.put(8, 0, 1)
	f.put(8, 0, 2)
	rd := NewRawReader(f.ring)
	err := rd.WithLease(func(l Lease) error {
		sample, remain, err := l.ReadSample()
		if err != nil {
			return err
		}
		if Touch(sample, false) != 1 || remain != 16 {
			t.Errorf("first sample %v, remain %d; want word 1, 16 bytes left", sample, remain)
		}
		if f.consumer != 0 {
			t.Errorf("consumer position %d published before Commit", f.consumer)
		}
		l.Commit()
		if f.consumer != 16 {
			t.Errorf("consumer position %d after Commit, want 16", f.consumer)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLeaseExclusive(t *testing.T) {
	f := newFakeRing(t, 4096)
	rd := NewRawReader(f.ring)
	err := rd.WithLease(func(Lease) error {
		return rd.WithLease(func(Lease) error { return nil })
	})
	if !errors.Is(err, errLeaseTaken) {
		t.Errorf("lease inside a lease: err %v, want %v", err, errLeaseTaken)
	}
	if err := rd.WithLease(func(Lease) error { return nil }); err != nil {
		t.Errorf("lease after the first ended: %v", err)
	}
}
