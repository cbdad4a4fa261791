package readers

import "sync/atomic"

// Loan is a buffer's oldest claim lent to its holder, who returns it
// without the engine's lock by publishing its end (docs/architecture.md). A
// holder that finds its loan called back before it took it back gives the
// claim back with [Engine.Release]; one called back while it returned it
// tells the engine with [Engine.Returned].
type Loan struct {
	// A loan goes out at t (lending stores nothing atomic); its holder
	// takes it back to t+1, the engine calls it back to t+2.
	steps    atomic.Uint64
	out      uint64             // t of the last loan, written by the holder's own call
	lent     bool               // a loan is out, or returned and not settled
	stopped  bool               // no more loans (Close, a readiness descriptor)
	calls    atomic.Uint64      // loans called back
	callsAt  uint64             // calls when the loan went out
	buffer   int                // the lent claim's
	release  func() (ended int) // ends the claim
	returned func() bool        // whether the claim's end is published
}

// BeginReturn takes the loan back, after which the holder publishes the
// claim's end and asks the [Return] whether the loan was called back
// meanwhile; false if no loan is out (then [Engine.Release]).
func (l *Loan) BeginReturn() (Return, bool) {
	r := Return{l, l.callsAt} // read before the loan is back: a new one may follow it
	return r, l.steps.CompareAndSwap(l.out, l.out+1)
}

// Return is a loan its holder is giving back.
type Return struct {
	loan    *Loan
	callsAt uint64
}

// CalledBack reports whether the engine called the loan back meanwhile:
// then the holder tells it with [Engine.Returned].
func (r Return) CalledBack() bool { return r.loan.calls.Load() != r.callsAt }

// Returning reports, under the engine's lock, whether the holder took the
// loan back: no other call may end its claim.
func (l *Loan) Returning() bool { return l.lent && l.steps.Load() == l.out+1 }

func (l *Loan) lend(i int) {
	if l.release != nil && !l.stopped {
		l.buffer, l.lent = i, true
		l.out, l.callsAt = l.steps.Load(), l.calls.Load()
	}
}

func (l *Loan) renew(renew func() bool) bool {
	if !l.Returning() || l.calls.Load() != l.callsAt || !renew() {
		return false
	}
	l.out++ // out again, at the count it is at
	return true
}

// settle ends the claim of a loan its holder returned, for the engine to
// publish.
func (l *Loan) settle() (i, ended int, ok bool) {
	if !l.Returning() || !l.returned() {
		return 0, 0, false
	}
	l.lent = false // out stays: BeginReturn fails from now on
	return l.buffer, l.release(), true
}

// callBack calls the loan out back, and stops lending if stop. One being
// returned is settled here if its end is published, else by the holder, who
// sees the call: of two sequentially consistent stores, one sees the other.
func (l *Loan) callBack(stop bool) (i, ended int, settled bool) {
	l.stopped = l.stopped || stop
	if !l.lent {
		return 0, 0, false
	}
	l.calls.Add(1)
	if l.steps.CompareAndSwap(l.out, l.out+2) {
		l.lent = false // its holder's Release ends it
		return 0, 0, false
	}
	return l.settle()
}
