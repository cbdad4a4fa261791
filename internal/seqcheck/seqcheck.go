// Package seqcheck checks that events numbered by a producer arrive once:
// no duplicates, and every number either delivered or counted as lost.
package seqcheck

import "fmt"

// Tracker records which sequence numbers arrived. Numbers are expected to
// be dense from 0, as producers in internal/progs number them.
type Tracker struct {
	seen       []uint64 // bitmap
	delivered  uint64
	duplicates uint64
	firstDup   uint64
}

// Add records seq as delivered. It returns false for a duplicate.
func (t *Tracker) Add(seq uint64) bool {
	word, bit := seq/64, uint64(1)<<(seq%64)
	if word >= uint64(len(t.seen)) {
		grown := make([]uint64, max(word+1, 2*uint64(len(t.seen))))
		copy(grown, t.seen)
		t.seen = grown
	}
	if t.seen[word]&bit != 0 {
		if t.duplicates == 0 {
			t.firstDup = seq
		}
		t.duplicates++
		return false
	}
	t.seen[word] |= bit
	t.delivered++
	return true
}

// Seen reports whether seq has arrived.
func (t *Tracker) Seen(seq uint64) bool {
	word, bit := seq/64, uint64(1)<<(seq%64)
	return word < uint64(len(t.seen)) && t.seen[word]&bit != 0
}

// Delivered returns how many distinct numbers arrived.
func (t *Tracker) Delivered() uint64 { return t.delivered }

// Check verifies that no number arrived twice and that the numbers below
// produced that did not arrive are exactly the lost ones.
func (t *Tracker) Check(produced, lost uint64) error {
	if t.duplicates > 0 {
		return fmt.Errorf("%d duplicate events, the first with sequence number %d", t.duplicates, t.firstDup)
	}
	if t.delivered+lost != produced {
		return fmt.Errorf("%d delivered + %d lost != %d produced", t.delivered, lost, produced)
	}
	return nil
}
