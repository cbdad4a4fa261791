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
		if got := new(CopyCache).Destination(c.b, 1); c.want && overlaps(got, mem[1024:2048]) {
			t.Errorf("Destination returned a view")
		}
	}
}

// TestRingMemoryMerges maps and unmaps at overlapping and adjoining places,
// as a process that opens readers for as long as it runs does: the spans
// merge instead of growing one a reader.
func TestRingMemoryMerges(t *testing.T) {
	mem := make([]byte, 1<<16) // stands in for the address space
	before := ringMemory.spans.Load()
	defer ringMemory.spans.Store(before)
	ringMemory.spans.Store(nil)
	const end = 32768 - 512 + 4096 // the last mapping's end
	for i := range 1000 {
		off := (i * 512) % 32768
		AddRingMemory(mem[off : off+4096])
	}
	AddRingMemory(mem[0:16]) // inside: changes nothing
	if n := len(*ringMemory.spans.Load()); n != 1 {
		t.Fatalf("%d spans after 1000 overlapping mappings, want 1", n)
	}
	if !inRingMemory(mem[end-1 : end : end]) {
		t.Error("the last byte of the merged span is not ring memory")
	}
	if inRingMemory(mem[end : end+1 : end+1]) {
		t.Error("the byte after every mapping is ring memory")
	}
	AddRingMemory(mem[len(mem)-1024:]) // apart: a second span
	if n := len(*ringMemory.spans.Load()); n != 2 {
		t.Fatalf("%d spans after a mapping apart, want 2", n)
	}
}
