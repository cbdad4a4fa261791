package bpftest

import (
	"errors"
	"os"
	"testing"
	"time"
)

// FlushTarget is a reader under CheckFlushEndsEveryWait: one read, a loop
// that returns the error that ends it, Flush and Close, its flush error,
// and how many reads and loops are in progress.
type FlushTarget struct {
	Read, Loop, Flush, Close func() error
	Flushed                  error
	InProgress               func() int
}

// CheckFlushEndsEveryWait checks that a Flush ends every loop waiting
// when it is called, with r.Flushed, while readers goroutines read again
// at once after their own: none of them may take the flush meant for the
// loop. Who wakes first is the scheduler's choice, so it takes rounds.
func CheckFlushEndsEveryWait(t *testing.T, rounds, readers int, r FlushTarget) {
	t.Helper()
	flushed := make(chan struct{}, readers)
	readerErr := make(chan error, readers)
	for range readers {
		go func() {
			for {
				err := r.Read()
				if !errors.Is(err, r.Flushed) {
					readerErr <- err
					return
				}
				select {
				case flushed <- struct{}{}:
				default:
				}
			}
		}()
	}
	within := func(ch <-chan error, what string) error {
		t.Helper()
		select {
		case err := <-ch:
			return err
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still waits", what)
			return nil
		}
	}
	for round := range rounds {
		loopErr := make(chan error, 1)
		go func() { loopErr <- r.Loop() }()
		for giveUp := time.Now().Add(5 * time.Second); r.InProgress() < readers+1; time.Sleep(time.Millisecond) {
			if time.Now().After(giveUp) {
				t.Fatalf("%d reads and loops in progress, want %d", r.InProgress(), readers+1)
			}
		}
		time.Sleep(20 * time.Millisecond) // in their wait
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-flushed:
		case <-time.After(5 * time.Second):
			t.Fatal("no read was flushed")
		}
		if err := within(loopErr, "the loop after Flush"); !errors.Is(err, r.Flushed) {
			t.Fatalf("round %d: the loop ended with %v, want %v", round, err, r.Flushed)
		}
	}
	r.Close()
	for range readers {
		if err := within(readerErr, "a read after Close"); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("a read ended with %v, want ErrClosed", err)
		}
	}
}
