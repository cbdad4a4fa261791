package readers

import (
	"testing"
	"unsafe"
)

func TestCopyDestination(t *testing.T) {
	area := make([]byte, 64) // stands in for a mapping
	before := ringMemory.spans.Load()
	defer ringMemory.spans.Store(before)
	AddRingMemory(area)
	own := make([]byte, 8, 32)
	for _, tc := range []struct {
		name  string
		dst   []byte
		n     int
		fresh bool
	}{
		{"own memory, large enough", own, 32, false},
		{"own memory, too small", own, 33, true},
		{"a view of the area", area[8:16:16], 8, true},
		{"a view of the area, resliced to nothing", area[60:60], 0, true},
		{"ending just before the area", make([]byte, 4), 4, false},
	} {
		got := new(CopyCache).Destination(tc.dst, tc.n)
		if len(got) != tc.n {
			t.Errorf("%s: %d bytes, want %d", tc.name, len(got), tc.n)
		}
		if overlaps(got, area) {
			t.Errorf("%s: the destination overlaps the area", tc.name)
		}
		if reused := cap(got) > 0 && cap(tc.dst) > 0 && &got[:1][0] == &tc.dst[:1][0]; reused == tc.fresh {
			t.Errorf("%s: reused %v, want %v", tc.name, reused, !tc.fresh)
		}
	}
}

// overlaps reports whether b, up to its capacity, overlaps area.
func overlaps(b, area []byte) bool {
	if cap(b) == 0 || len(area) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	areaStart := uintptr(unsafe.Pointer(unsafe.SliceData(area)))
	return start < areaStart+uintptr(len(area)) && areaStart < start+uintptr(cap(b))
}
