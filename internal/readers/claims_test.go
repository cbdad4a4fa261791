package readers

import "testing"

func TestInOrder(t *testing.T) {
	l := NewClaims(100)
	a := l.Hold(140)
	b := l.Hold(200)
	if got := l.ConsumerPos(); got != 100 {
		t.Fatalf("consumer position %d with two claims held, want 100", got)
	}
	// b ends first: a still pins the consumer position.
	if l.Release(b, 200) {
		t.Fatal("a claim read whole gave records back")
	}
	if got := l.ConsumerPos(); got != 100 {
		t.Fatalf("consumer position %d after the later claim ended, want 100", got)
	}
	l.Release(a, 140)
	if got := l.ConsumerPos(); got != 200 || !l.Empty() {
		t.Fatalf("consumer position %d, %+v; want 200 and no claims", got, l)
	}
}

func TestGiveBackLast(t *testing.T) {
	l := NewClaims(0)
	c := l.Hold(64)
	if !l.Release(c, 24) {
		t.Fatal("a claim read in part gave nothing back")
	}
	// Nothing was claimed after it: the claim position moves back.
	if l.Pos() != 24 || !l.Empty() || l.HasReturned() {
		t.Fatalf("%+v, want claim position 24 and no claims", l)
	}
}

func TestGiveBackBeforeOthers(t *testing.T) {
	l := NewClaims(0)
	a := l.Hold(64)
	b := l.Hold(128)
	l.Release(a, 24)
	r, ok := l.Returned()
	if !ok || r != (Claim{24, 64}) {
		t.Fatalf("returned %v %v, want [24, 64); %+v", r, ok, l)
	}
	if got := l.ConsumerPos(); got != 24 {
		t.Fatalf("consumer position %d, want 24: returned records are not consumed", got)
	}
	// Take part of it and hold it, consume the rest at once.
	held := l.Take(24, 40, true)
	if held != (Claim{24, 40}) {
		t.Fatalf("took %v, want [24, 40)", held)
	}
	l.Take(40, 64, false)
	if l.HasReturned() {
		t.Fatalf("%+v: nothing should be returned", l)
	}
	l.Release(b, 128)
	l.Release(held, 40)
	if got := l.ConsumerPos(); got != 128 || !l.Empty() {
		t.Fatalf("consumer position %d, %+v; want 128 and no claims", got, l)
	}
}

func TestTakeWholeAndReturnAgain(t *testing.T) {
	l := NewClaims(0)
	a := l.Hold(64)
	l.Hold(128)
	l.Release(a, 0) // nothing read: all of it goes back
	r, _ := l.Returned()
	c := l.Take(r.Start, r.End, true)
	if c != (Claim{0, 64}) || l.HasReturned() {
		t.Fatalf("took %v; %+v", c, l)
	}
	l.Release(c, 32)
	if r, ok := l.Returned(); !ok || r != (Claim{32, 64}) {
		t.Fatalf("returned %v %v, want [32, 64)", r, ok)
	}
}

func TestSkip(t *testing.T) {
	l := NewClaims(8)
	l.Skip(40)
	if l.Pos() != 40 || l.ConsumerPos() != 40 {
		t.Fatalf("%+v, want claim and consumer position 40", l)
	}
}
