package readers

import "unsafe"

// CopyDestination returns the memory a copying read (ReadInto) copies a
// record of n bytes into: dst resliced, if it holds n bytes and does not
// overlap area, else new memory. area is the mapped buffer whose views the
// zero-copy reads hand out; a record reused from one of them (a Records
// body's, or one kept past it) still points into the mapping, which is
// read-only or the kernel's, and must never be written.
func CopyDestination(dst []byte, n int, area []byte) []byte {
	if n > cap(dst) || Overlaps(dst, area) {
		return make([]byte, n)
	}
	return dst[:n]
}

// Overlaps reports whether the memory of b, up to its capacity, overlaps
// area.
func Overlaps(b, area []byte) bool {
	if cap(b) == 0 || len(area) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	areaStart := uintptr(unsafe.Pointer(unsafe.SliceData(area)))
	return start < areaStart+uintptr(len(area)) && areaStart < start+uintptr(cap(b))
}
