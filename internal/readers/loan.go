package readers

import "sync/atomic"

// Loan is a claim lent to its holder, who gives it back without the
// engine's lock: a Peek view that Consume ends with one compare-and-swap
// and a store of the kernel's consumer position, where the lock would
// cost as much again (BenchmarkRead, mode peek). Only a buffer's oldest
// claim is lent (Take Lent), so that its end is a consumer position the
// holder may publish itself, and the published position is how the
// engine learns that the loan came back: it settles it the next time it
// looks at the claims. A loan counts as held until settled, so the
// buffers stay mapped while the holder stores.
//
// The engine calls a loan back when it must hear of its end at once:
// when a read or loop claims past it, so that the position past them is
// published when it ends; and, lending no more, at Close, whose buffers
// are freed when it comes, and once a readiness descriptor is out, which
// shows what follows it. A holder that finds its loan called back gives
// the claim back with Release.
type Loan struct {
	// steps counts the loans' moves: a loan goes out at a count t, its
	// holder takes it back to return it by moving it to t+1, the engine
	// calls it back by moving it elsewhere. The engine only reads it but
	// to call a loan back, so lending costs it no atomic write.
	steps atomic.Uint64
	// out is the count the last loan went out at, written by the lend in
	// the holder's own PeekInto, so that the holder reads it unlocked.
	out      uint64
	lent     bool          // a loan is out, or returned and not settled
	stopped  bool          // no more loans (Close, a readiness descriptor)
	calls    atomic.Uint64 // loans called back: a holder who sees a new one tells the engine
	callsAt  uint64        // calls when the loan went out; read by the holder, as out
	buffer   int
	release  func() (ended int) // gives the claim back in its buffer's claims
	returned func() bool        // whether the claim's end is published
}

// BeginReturn takes the loan back to return it: it reports false if none
// is out (called back, never lent, or taken back by another call), and
// the holder uses Release. Then the holder publishes its claim's end, and
// asks the Return whether the loan was called back meanwhile.
func (l *Loan) BeginReturn() (Return, bool) {
	r := Return{l, l.callsAt} // read before the loan is back: a new one may follow it
	return r, l.steps.CompareAndSwap(l.out, l.out+1)
}

// Return is a loan its holder is giving back.
type Return struct {
	loan    *Loan
	callsAt uint64
}

// CalledBack reports, once the holder published its claim's end, whether
// the engine called the loan back meanwhile: then the holder tells it
// (Engine.Returned), which settles the loan if the engine has not.
func (r Return) CalledBack() bool { return r.loan.calls.Load() != r.callsAt }

// Returning reports, under the engine's lock, whether a holder took the
// loan back to return it: no other call may give its claim back.
func (l *Loan) Returning() bool { return l.lent && l.steps.Load() == l.out+1 }

// lend lends the claim buffer i's claim just took, unless lending
// stopped: then it is held.
func (l *Loan) lend(i int) {
	if l.release != nil && !l.stopped {
		l.buffer, l.lent = i, true
		l.out, l.callsAt = l.steps.Load(), l.calls.Load()
	}
}

// renew is Engine.Renew's work on the loan.
func (l *Loan) renew(renew func() bool) bool {
	if !l.Returning() || l.calls.Load() != l.callsAt || !renew() {
		return false
	}
	l.out++ // out again, at the count it is at
	return true
}

// settle settles a loan its holder returned: its claim ends in buffer
// i's claims (ended), for the engine to publish.
func (l *Loan) settle() (i, ended int, ok bool) {
	if !l.Returning() || !l.returned() {
		return 0, 0, false
	}
	l.lent = false // out stays: BeginReturn fails from now on
	return l.buffer, l.release(), true
}

// callBack calls the loan out back, if one is: one its holder has not
// taken back returns through Release, one returned is settled, and one
// being returned is settled here if its position is published, else by
// the holder's Release, since it sees the call (both are sequentially
// consistent: one of the two sees the other's store). With stop, no
// claim is lent from then on.
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
