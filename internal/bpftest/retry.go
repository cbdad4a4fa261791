package bpftest

import (
	"errors"
	"math/rand/v2"
	"os"
	"time"
)

// Retry sorts the error that ended a read in a stress test, whose reader
// meets Flush, deadlines and Close at random instants: after nil (a loop
// that broke or panicked on purpose), flushed (the package's ErrFlushed)
// or a deadline, the read may start again (done is false), after a random
// pause of up to pause so that a deadline in the past does not make it
// spin; after os.ErrClosed it is done; after anything else it is done
// with bad, err, to report.
func Retry(err, flushed error, pause time.Duration) (done bool, bad error) {
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, os.ErrClosed):
		return true, nil
	case errors.Is(err, flushed), errors.Is(err, os.ErrDeadlineExceeded):
		time.Sleep(rand.N(pause))
		return false, nil
	}
	return true, err
}
