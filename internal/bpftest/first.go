package bpftest

import (
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
