package readers

import "testing"

func TestRingMemory(t *testing.T) {
	mem := make([]byte, 4096) // stands in for a mapping
	before := ringMemory.spans.Load()
	defer ringMemory.spans.Store(before)
	AddRingMemory(mem[1024:2048])
	AddRingMemory(mem[1024:1536]) // inside the first: not added again
	if n := len(*ringMemory.spans.Load()); before != nil && n != len(*before)+1 || before == nil && n != 1 {
		t.Fatalf("%d spans after adding one range twice", n)
	}
	for _, c := range []struct {
		b    []byte
		want bool
	}{
		{mem[:1024:1024], false},
		{mem[:1024], true}, // its capacity reaches into the range
		{mem[1500:1501:1501], true},
		{mem[2048:], false},
		{mem[1000:1000], true},
		{nil, false},
	} {
		if got := inRingMemory(c.b); got != c.want {
			t.Errorf("[%d bytes, cap %d]: in ring memory %v, want %v", len(c.b), cap(c.b), got, c.want)
		}
		if got := CopyDestination(c.b, 1); c.want && overlaps(got, mem[1024:2048]) {
			t.Errorf("CopyDestination returned a view")
		}
	}
}
