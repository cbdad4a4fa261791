package readers

import "slices"

// Claim is a range of buffer positions [Start, End).
type Claim struct {
	Start, End uint64
}

// BatchBytes bounds every batch's walk of a buffer of size bytes, and what
// a loop claims of it when others read too: a publish at least
// every 256 KiB (docs/batch-walk.md).
func BatchBytes(size uint64) uint64 { return min(size/8, 256<<10) }

// Claims is one buffer's claims, held or returned, oldest first
// (docs/architecture.md).
type Claims struct {
	pos      uint64 // records below were handed out, or skipped
	items    []item
	returned int // items given back
}

type item struct {
	Claim
	returned bool
}

// NewClaims returns the Claims of a buffer consumed below pos.
func NewClaims(pos uint64) Claims { return Claims{pos: pos} }

// Pos returns the claim position, below which records were handed out.
func (l *Claims) Pos() uint64 { return l.pos }

// Empty reports whether no claim is listed.
func (l *Claims) Empty() bool { return len(l.items) == 0 }

// Holding reports whether a claim is held (listed and not given back).
func (l *Claims) Holding() bool { return len(l.items) > l.returned }

// HasReturned reports whether records were given back to be claimed again.
func (l *Claims) HasReturned() bool { return l.returned > 0 }

// ConsumerPos returns the position below which every record is consumed.
func (l *Claims) ConsumerPos() uint64 {
	if len(l.items) > 0 {
		return l.items[0].Start
	}
	return l.pos
}

// Skip consumes up to end without a claim.
func (l *Claims) Skip(end uint64) { l.pos = end }

// Hold hands out [Pos, end) as a claim the caller holds until Release.
func (l *Claims) Hold(end uint64) Claim {
	c := Claim{Start: l.pos, End: end}
	l.items = append(l.items, item{Claim: c})
	l.pos = end
	return c
}

// Renew moves c, read whole, on to [c.End, end) as a new claim held; it
// reports false, changing nothing, unless c is the only claim and nothing
// was claimed past it.
func (l *Claims) Renew(c Claim, end uint64) (Claim, bool) {
	if len(l.items) != 1 || l.items[0] != (item{Claim: c}) || l.pos != c.End {
		return Claim{}, false
	}
	next := Claim{Start: c.End, End: end}
	l.items[0].Claim, l.pos = next, end
	return next, true
}

// Returned returns the oldest claim given back, if any.
func (l *Claims) Returned() (Claim, bool) {
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

// Take hands out the returned claim at start up to upTo, held if hold, else
// consumed; the rest stays returned.
func (l *Claims) Take(start, upTo uint64, hold bool) Claim {
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

// Release ends held claim c, read below upTo, and reports whether it gave
// records back (the claim position moves back, or they stay returned).
func (l *Claims) Release(c Claim, upTo uint64) (gaveBack bool) {
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

func (l *Claims) index(start uint64, returned bool) int {
	for i := range l.items {
		if l.items[i].Start == start && l.items[i].returned == returned {
			return i
		}
	}
	panic("readers: no such claim") // a reader's bookkeeping is broken
}

func (l *Claims) remove(i int) {
	if l.items[i].returned {
		l.returned--
	}
	if i == len(l.items)-1 { // the newest, a read's one claim: no shift
		l.items = l.items[:i]
		return
	}
	l.items = slices.Delete(l.items, i, i+1)
}
