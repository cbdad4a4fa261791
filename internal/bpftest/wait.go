package bpftest

import (
	"testing"
	"time"
)

// Receive returns what arrives on ch within d, or fails t at once: what
// (e.g. "a read, after Close,") is still blocked.
func Receive[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s still blocked after %v", what, d)
	}
	var zero T
	return zero
}

// StillWaiting fails t at once if anything arrives on ended within d
// (d 0: if anything is there now): the goroutines that report there, what
// (e.g. "a waiter on an empty ring"), were meant to be blocked.
func StillWaiting[T any](t *testing.T, ended <-chan T, d time.Duration, what string) {
	t.Helper()
	select {
	case v := <-ended: // before a timer of 0 fires, which select may prefer
		t.Fatalf("%s returned (%v); want it still waiting", what, v)
	default:
	}
	select {
	case v := <-ended:
		t.Fatalf("%s returned (%v); want it still waiting", what, v)
	case <-time.After(d):
	}
}

// Within fails t at once if fn has not returned after d: what is still
// blocked. fn goes on running.
func Within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %v", what, d)
	}
}
