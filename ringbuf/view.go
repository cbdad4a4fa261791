package ringbuf

import (
	"sync/atomic"

	"github.com/ebpf-zc/ebpf/internal/readers"
)

// peekView is the Reader's peeked view, under the engine's mutex but for
// consumeTicket and ended. A fast view is not listed in the claims: Consume ends
// it without the mutex, or a holder that cannot wait takes it over
// (docs/architecture.md, "Peek view and fast Consume").
type peekView struct {
	peeking bool   // a PeekInto is in progress, or its view is held
	held    bool   // PeekInto handed out a view not yet consumed
	fast    bool   // held, unlisted, and Consume may end it without the mutex
	lines   uint32 // what loadLines read, kept (in the bools' padding)
	claim   claim
	ticket  uint64 // ended when the fast view was handed out

	consumeTicket consumeTicket // the peeking goroutine's: PeekInto writes it, Consume reads it
	// ended counts fast views: +1 when Consume ends one, +2 when the mutex
	// takes one over. It only grows, so a stale ticket never matches.
	ended atomic.Uint64
}

// consumeTicket is what Consume needs to end a fast view without the mutex.
type consumeTicket struct {
	fast        bool
	ticket, end uint64
}

// settleLocked reports whether no fast view is out; c is ring 0's
// consumer, core its engine's. A fast view that Consume ended is settled;
// with takeOver, one still held is listed as a held claim, for Consume to
// end under the mutex.
func (v *peekView) settleLocked(c *consumer, core *readers.Engine, takeOver bool) bool {
	if !v.fast {
		return true
	}
	if v.ended.Load() != v.ticket+1 {
		if !takeOver {
			return false
		}
		if v.ended.CompareAndSwap(v.ticket, v.ticket+2) {
			v.fast = false
			c.claims.Restore(v.claim)
			return true
		}
		// Consume ended it meanwhile: only its compare-and-swap moves ended.
	}
	v.peeking, v.held, v.fast = false, false, false
	c.publishedPos = v.claim.End // Consume published it
	core.UserDoneLocked(0, false)
	c.publish()
	return true
}

// publishPastLocked tells the kernel c's consumer position while a fast
// view is out: one with records after it that could be published is
// taken over, so that its Consume publishes them.
func (v *peekView) publishPastLocked(c *consumer, core *readers.Engine) {
	if v.settleLocked(c, core, c.claims.Pos() != v.claim.End || !c.claims.Empty()) {
		c.publish()
	}
}
