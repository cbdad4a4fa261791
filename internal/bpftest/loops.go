package bpftest

import (
	"errors"
	"iter"
	"testing"
)

// First returns a copy of the first record a reader's Records loop yields,
// the loop ended after it: in tests that keep a view past its loop.
func First[R any](tb testing.TB, records iter.Seq2[*R, error]) R {
	tb.Helper()
	for rec, err := range records {
		if err != nil {
			tb.Fatal(err)
		}
		return *rec
	}
	tb.Fatal("the loop ended without a record")
	panic("unreachable")
}

// LoopUntilError ranges over a reader's loop (Records, Batches),
// taking everything it yields, until it yields an error, and returns
// that error: the one that ended a wait.
func LoopUntilError[T any](loop iter.Seq2[T, error]) error {
	for _, err := range loop {
		if err != nil {
			return err
		}
	}
	return errors.New("loop ended without an error")
}

// ReadUntilError calls readInto (a reader's ReadInto), into one record,
// again and again, taking everything, until it fails, and returns that
// error: the one that ended a wait.
func ReadUntilError[R any](readInto func(rec *R) error) error {
	var rec R
	for {
		if err := readInto(&rec); err != nil {
			return err
		}
	}
}

// PanicsWith runs fn and fails t at once unless fn panics with want:
// a loop body's or a lease's panic must reach the caller unchanged, what
// names whose ("the body's").
func PanicsWith(t *testing.T, want any, what string, fn func()) {
	t.Helper()
	defer func() {
		if got := recover(); got != want {
			t.Fatalf("recovered %v, want %s panic", got, what)
		}
	}()
	fn()
}
