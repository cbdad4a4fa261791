package readers

import "testing"

// FuzzClaims runs random sequences of what the readers do to a buffer's
// claims (hold, skip, release read in part, take back what was given
// back) against a model that keeps a state for every position, and checks
// after each operation what the kernel would be told (ConsumerPos) and
// what the next claim would find.
func FuzzClaims(f *testing.F) {
	f.Add([]byte{0, 3, 0, 2, 2, 0, 1, 3, 0, 1, 2})
	f.Add([]byte{0, 4, 0, 4, 2, 1, 1, 3, 1, 0, 2, 0, 0, 3, 0, 1})
	f.Add([]byte{1, 2, 0, 1, 2, 0, 0, 0, 1, 3, 2, 3, 3, 2, 5})
	f.Fuzz(func(t *testing.T, ops []byte) {
		m := newClaimsModel(16)
		for len(ops) >= 3 && len(m.state) < 4096 {
			op, a, b := ops[0]%4, int(ops[1]), int(ops[2])
			ops = ops[3:]
			switch op {
			case 0:
				m.hold(t, 1+a%4)
			case 1:
				m.skip(1 + a%4)
			case 2:
				m.release(t, a, b)
			case 3:
				m.take(t, a, b)
			}
			m.check(t)
		}
	})
}

// claimsModel is a buffer's positions from base on, each consumed, held
// by a claim or given back: not what Claims keeps, but what it means.
type claimsModel struct {
	l     Claims
	base  uint64
	state []posState // from base to the claim position
	next  int        // the next id a claim or returned range gets
	held  []Claim    // held claims, in no order
}

type posState struct {
	kind int // consumed, held, returned
	id   int // the claim or returned range
}

const (
	consumed = iota
	held
	returned
)

func newClaimsModel(base uint64) *claimsModel {
	return &claimsModel{l: NewClaims(base), base: base}
}

func (m *claimsModel) pos() uint64 { return m.base + uint64(len(m.state)) }

func (m *claimsModel) set(from, to uint64, s posState) {
	for p := from; p < to; p++ {
		m.state[p-m.base] = s
	}
}

func (m *claimsModel) hold(t *testing.T, n int) {
	start := m.pos()
	c := m.l.Hold(start + uint64(n))
	if c != (Claim{Start: start, End: start + uint64(n)}) {
		t.Fatalf("Hold(%d) at %d: %+v", start+uint64(n), start, c)
	}
	m.next++
	for range n {
		m.state = append(m.state, posState{held, m.next})
	}
	m.held = append(m.held, c)
}

func (m *claimsModel) skip(n int) {
	m.l.Skip(m.pos() + uint64(n))
	for range n {
		m.state = append(m.state, posState{kind: consumed})
	}
}

// release ends the a-th held claim, read up to b of its positions.
func (m *claimsModel) release(t *testing.T, a, b int) {
	if len(m.held) == 0 {
		return
	}
	i := a % len(m.held)
	c := m.held[i]
	m.held = append(m.held[:i], m.held[i+1:]...)
	upTo := c.Start + uint64(b)%(c.End-c.Start+1)
	gaveBack := m.l.Release(c, upTo)
	if gaveBack != (upTo < c.End) {
		t.Fatalf("Release(%+v, %d) gave back %v", c, upTo, gaveBack)
	}
	m.set(c.Start, upTo, posState{kind: consumed})
	switch {
	case upTo == c.End:
	case c.End == m.pos():
		m.state = m.state[:upTo-m.base] // nothing after it: claimed again from upTo
	default:
		m.next++
		m.set(upTo, c.End, posState{returned, m.next})
	}
}

// take takes the oldest returned range back, up to a of its positions,
// held if b is odd.
func (m *claimsModel) take(t *testing.T, a, b int) {
	r, ok := m.l.Returned()
	start, end, want := m.oldestReturned()
	if ok != want || ok && r != (Claim{Start: start, End: end}) {
		t.Fatalf("Returned() = %+v, %v; want {%d %d}, %v", r, ok, start, end, want)
	}
	if !ok {
		return
	}
	upTo := r.Start + 1 + uint64(a)%(r.End-r.Start)
	hold := b%2 == 1
	c := m.l.Take(r.Start, upTo, hold)
	if c != (Claim{Start: r.Start, End: upTo}) {
		t.Fatalf("Take(%d, %d, %v) = %+v", r.Start, upTo, hold, c)
	}
	if hold {
		m.next++
		m.set(r.Start, upTo, posState{held, m.next})
		m.held = append(m.held, c)
	} else {
		m.set(r.Start, upTo, posState{kind: consumed})
	}
}

// oldestReturned is the returned range with the lowest positions.
func (m *claimsModel) oldestReturned() (start, end uint64, ok bool) {
	for i, s := range m.state {
		if s.kind != returned {
			continue
		}
		j := i
		for j < len(m.state) && m.state[j] == s {
			j++
		}
		return m.base + uint64(i), m.base + uint64(j), true
	}
	return 0, 0, false
}

// check compares Claims with the model: the consumer position is the
// first position not consumed, the claim position the model's end, and
// Empty and HasReturned what the states say.
func (m *claimsModel) check(t *testing.T) {
	t.Helper()
	consumer, anyReturned := m.pos(), false
	for i := len(m.state) - 1; i >= 0; i-- {
		if m.state[i].kind != consumed {
			consumer = m.base + uint64(i)
		}
		anyReturned = anyReturned || m.state[i].kind == returned
	}
	if got := m.l.ConsumerPos(); got != consumer {
		t.Fatalf("ConsumerPos %d, want %d (states %v)", got, consumer, m.state)
	}
	if got := m.l.Pos(); got != m.pos() {
		t.Fatalf("Pos %d, want %d", got, m.pos())
	}
	if got := m.l.HasReturned(); got != anyReturned {
		t.Fatalf("HasReturned %v, want %v", got, anyReturned)
	}
	if got, want := m.l.Empty(), len(m.held) == 0 && !anyReturned; got != want {
		t.Fatalf("Empty %v, want %v", got, want)
	}
}
