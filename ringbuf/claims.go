package ringbuf

// A claim is a range of ring positions handed to one caller: a batch for a
// Records loop, one record for Read or Peek. Claims are made in ring order
// and may be released in any order; the consumer position, which tells the
// kernel what it may overwrite, only advances over a prefix of released
// claims. A claim a caller gives back unread (a loop that breaks in the
// middle of its batch) is marked returned and handed out again first.

type claimState uint8

const (
	claimHeld     claimState = iota // a caller is reading it
	claimReleased                   // read; space may go back to the kernel
	claimReturned                   // unread; the next claim takes it
)

type claim struct {
	start, end uint64
	state      claimState
}

// claimQueue holds the claims between the consumer position and the claim
// position, oldest first. With one consumer it holds at most one claim, so
// every operation is O(1) and reuses the same backing array.
type claimQueue struct {
	items    []claim
	head     int
	returned int // claims in state claimReturned
}

func (q *claimQueue) empty() bool { return q.head == len(q.items) }

func (q *claimQueue) push(c claim) {
	if q.empty() {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 32 && q.head > len(q.items)/2 {
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, c)
}

// find returns the index of the claim that starts at start, or -1.
func (q *claimQueue) find(start uint64) int {
	for i := q.head; i < len(q.items); i++ {
		if q.items[i].start == start {
			return i
		}
	}
	return -1
}

// firstReturned returns the index of the oldest returned claim, or -1.
func (q *claimQueue) firstReturned() int {
	if q.returned == 0 {
		return -1
	}
	for i := q.head; i < len(q.items); i++ {
		if q.items[i].state == claimReturned {
			return i
		}
	}
	return -1
}

// split cuts claim i at position at; the part from at on gets state rest.
func (q *claimQueue) split(i int, at uint64, rest claimState) {
	tail := claim{start: at, end: q.items[i].end, state: rest}
	q.items[i].end = at
	q.items = append(q.items, claim{})
	copy(q.items[i+2:], q.items[i+1:])
	q.items[i+1] = tail
	if rest == claimReturned {
		q.returned++
	}
}

// setState changes claim i's state, keeping the returned count.
func (q *claimQueue) setState(i int, state claimState) {
	if q.items[i].state == claimReturned {
		q.returned--
	}
	if state == claimReturned {
		q.returned++
	}
	q.items[i].state = state
}

// popReleased drops the released claims at the head and returns the end of
// the last one dropped, or ok false if the head is not released.
func (q *claimQueue) popReleased() (end uint64, ok bool) {
	for !q.empty() && q.items[q.head].state == claimReleased {
		end, ok = q.items[q.head].end, true
		q.head++
	}
	return end, ok
}
