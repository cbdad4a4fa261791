//go:build linux

package epoll

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestWaitTimesOut(t *testing.T) {
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, timeout := range []time.Duration{0, 200 * time.Microsecond, 5 * time.Millisecond} {
		start := time.Now()
		if err := p.Wait(timeout); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Wait(%v) = %v, want os.ErrDeadlineExceeded", timeout, err)
		}
		if took := time.Since(start); took < timeout {
			t.Errorf("Wait(%v) returned after %v", timeout, took)
		}
	}
}

func TestWakeReachesEveryWaiterUntilDrained(t *testing.T) {
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan error, 3)
	for range 3 {
		go func() { done <- p.Wait(-1) }()
	}
	time.Sleep(10 * time.Millisecond)
	if err := p.Wake(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a waiter missed the wake-up")
		}
	}
	if err := p.Drain(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Wait after Drain: %v", err)
	}
}
