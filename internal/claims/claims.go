// Package claims keeps account of the records a reader has handed out of
// one kernel buffer (a BPF ring buffer, a perf event buffer) to callers
// that read them in place and finish in any order.
//
// A claim is a range of buffer positions [Start, End) handed to one
// caller. Claims are made in buffer order at the claim position and end
// in any order. A claim that ends early gives its unread rest back: the
// claim position moves back over it if nothing was claimed after it, else
// the rest stays listed as returned, and the next claimer takes it first.
// The consumer position, what the kernel may reuse below, is derived: the
// start of the oldest claim still listed, or the claim position if none
// is. So space a caller still reads is never given to the kernel, and no
// released state has to be swept.
//
// A List is not safe for concurrent use: its reader guards it.
package claims

import (
	"fmt"
	"slices"
)

// Claim is a range of buffer positions [Start, End).
type Claim struct {
	Start, End uint64
}

// List is one buffer's claims, held or returned, oldest first.
type List struct {
	pos      uint64 // records below were handed out, or skipped
	items    []item
	returned int // items given back unread
}

type item struct {
	Claim
	returned bool
}

// New returns a List whose records below pos are consumed.
func New(pos uint64) List { return List{pos: pos} }

// Pos returns the claim position: records below it were handed out.
func (l *List) Pos() uint64 { return l.pos }

// Empty reports whether no claim is listed: the consumer position is the
// claim position.
func (l *List) Empty() bool { return len(l.items) == 0 }

// Len returns how many claims are listed, held or returned.
func (l *List) Len() int { return len(l.items) }

// HasReturned reports whether records were given back to be claimed again.
func (l *List) HasReturned() bool { return l.returned > 0 }

// ConsumerPos returns the position below which every record is consumed.
func (l *List) ConsumerPos() uint64 {
	if len(l.items) > 0 {
		return l.items[0].Start
	}
	return l.pos
}

// Skip moves the claim position to end without listing a claim: the
// records up to end are consumed as they are handed out (a copy made
// before the reader lets go of its lock, records the producer discarded).
func (l *List) Skip(end uint64) { l.pos = end }

// Hold hands out [Pos, end) as a claim the caller holds until Release.
func (l *List) Hold(end uint64) Claim {
	c := Claim{Start: l.pos, End: end}
	l.items = append(l.items, item{Claim: c})
	l.pos = end
	return c
}

// Returned returns the oldest claim given back, if any.
func (l *List) Returned() (Claim, bool) {
	if l.returned == 0 {
		return Claim{}, false
	}
	for _, it := range l.items {
		if it.returned {
			return it.Claim, true
		}
	}
	return Claim{}, false
}

// Take hands out the front of the returned claim that starts at start, up
// to upTo: held by the caller if hold, else consumed at once. The rest
// stays returned.
func (l *List) Take(start, upTo uint64, hold bool) Claim {
	i := l.index(start, true)
	it := l.items[i]
	taken := Claim{Start: start, End: upTo}
	switch {
	case upTo == it.End && hold:
		l.items[i].returned = false
		l.returned--
	case upTo == it.End:
		l.remove(i)
	case hold:
		l.items[i].Start = upTo
		l.items = slices.Insert(l.items, i, item{Claim: taken})
	default:
		l.items[i].Start = upTo
	}
	return taken
}

// Release ends held claim c: the records below upTo were read, the rest
// is given back. It reports whether records were given back, so that the
// caller wakes those who wait for them.
func (l *List) Release(c Claim, upTo uint64) (gaveBack bool) {
	i := l.index(c.Start, false)
	end := l.items[i].End
	switch {
	case upTo >= end:
		l.remove(i)
		return false
	case end == l.pos && i == len(l.items)-1:
		l.pos = upTo // nothing was claimed after it
		l.remove(i)
	default:
		l.items[i] = item{Claim: Claim{Start: upTo, End: end}, returned: true}
		l.returned++
	}
	return true
}

// index finds the claim that starts at start, returned or held. Claims
// never overlap, so the start names one.
func (l *List) index(start uint64, returned bool) int {
	for i := range l.items {
		if l.items[i].Start == start && l.items[i].returned == returned {
			return i
		}
	}
	panic("claims: no such claim") // a reader's bookkeeping is broken
}

func (l *List) remove(i int) {
	if l.items[i].returned {
		l.returned--
	}
	if i == len(l.items)-1 { // the common case, a peek's one claim: no shift
		l.items = l.items[:i]
		return
	}
	l.items = slices.Delete(l.items, i, i+1)
}

// String describes the claims, for test failures.
func (l *List) String() string {
	s := fmt.Sprintf("claim position %d:", l.pos)
	for _, it := range l.items {
		state := "held"
		if it.returned {
			state = "returned"
		}
		s += fmt.Sprintf(" [%d, %d) %s", it.Start, it.End, state)
	}
	return s
}
