package bpftest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// fakeProducer numbered produced records and dropped some of them.
type fakeProducer struct{ produced, dropped uint64 }

func (p fakeProducer) Counts() (produced, dropped uint64, err error) {
	return p.produced, p.dropped, nil
}

// checkSeq is a RecordCheck for records that carry their sequence number
// in their first 8 bytes and nothing else.
func checkSeq(record []byte, size int, pattern bool) (uint64, error) {
	if len(record) != size || size < 8 {
		return 0, fmt.Errorf("record of %d bytes, want %d", len(record), size)
	}
	return binary.NativeEndian.Uint64(record), nil
}

// sample returns a sample of n bytes that carries record seq.
func sample(seq uint64, n int) []byte {
	s := make([]byte, n)
	binary.NativeEndian.PutUint64(s, seq)
	return s
}

// recordingTB is a testing.TB that keeps its errors instead of failing.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Helper()             {}
func (r *recordingTB) Logf(string, ...any) {}
func (r *recordingTB) Error(args ...any)   { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestLedger(t *testing.T) {
	padded := func(size int) int { return size + 4 }
	producers := []fakeProducer{{produced: 3}, {produced: 2, dropped: 1}}
	for _, tc := range []struct {
		name       string
		deliver    func(l *Ledger) error
		wantErr    string // of the last Deliver
		wantChecks []string
	}{
		{"all once", func(l *Ledger) error {
			for seq := range uint64(3) {
				if err := l.Deliver(-1, sample(seq, 12)); err != nil {
					return err
				}
			}
			return l.Deliver(1, sample(1, 20))
		}, "", nil},
		{"twice", func(l *Ledger) error {
			l.Deliver(0, sample(0, 12))
			l.ReaderClosed(0)
			return l.Deliver(0, sample(0, 12))
		}, "record 0 delivered twice", []string{"record 0 delivered twice", "stream 0", "stream 1"}},
		{"twice by one reader, though allowed twice", func(l *Ledger) error {
			l.ReaderClosed(5)
			l.Deliver(0, sample(0, 12))
			return l.Deliver(0, sample(0, 12))
		}, "delivered twice by one reader", []string{"twice by one reader", "stream 0", "stream 1"}},
		{"again after a close", func(l *Ledger) error {
			for seq := range uint64(3) {
				l.Deliver(0, sample(seq, 12))
			}
			l.Deliver(1, sample(1, 20))
			l.ReaderClosed(1)
			return l.Deliver(0, sample(2, 12))
		}, "", nil},
		{"unpadded", func(l *Ledger) error { return l.Deliver(0, sample(0, 8)) }, "a sample of 8 bytes, want 12", []string{"want 12", "stream 0", "stream 1"}},
		{"no such size", func(l *Ledger) error { return l.Deliver(-1, sample(0, 9)) }, "no producer makes that", []string{"no producer", "stream 0", "stream 1"}},
		{"lost more than dropped", func(l *Ledger) error {
			l.DeliverLost(2)
			return nil
		}, "", []string{"stream 0", "stream 1", "reported 2 records lost, the producers dropped 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger(checkSeq, padded, producers, []int{8, 16})
			err := tc.deliver(l)
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Deliver: %v, want %q", err, tc.wantErr)
			}
			var tb recordingTB
			l.Check(&tb)
			if len(tb.errs) != len(tc.wantChecks) {
				t.Fatalf("Check failed with %q, want %d failures", tb.errs, len(tc.wantChecks))
			}
			for i, want := range tc.wantChecks {
				if !strings.Contains(tb.errs[i], want) {
					t.Errorf("failure %d: %q, want it to say %q", i, tb.errs[i], want)
				}
			}
		})
	}
}

func TestRetry(t *testing.T) {
	flushed := errors.New("flushed")
	other := errors.New("other")
	for _, tc := range []struct {
		err  error
		done bool
		bad  error
	}{
		{nil, false, nil},
		{fmt.Errorf("read: %w", flushed), false, nil},
		{fmt.Errorf("read: %w", os.ErrDeadlineExceeded), false, nil},
		{fmt.Errorf("read: %w", os.ErrClosed), true, nil},
		{other, true, other},
	} {
		done, bad := Retry(tc.err, flushed, 1)
		if done != tc.done || bad != tc.bad {
			t.Errorf("Retry(%v) = %v, %v; want %v, %v", tc.err, done, bad, tc.done, tc.bad)
		}
	}
}
