//go:build linux

package bpftest

import (
	"bytes"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CheckCopyIntoRemappedMemory tries a reader's ReadInto with memory the
// caller lent it and then unmapped, where the kernel then maps another
// reader's buffer: size is that reader's mappings, off its first view's
// offset in them, as they land top down in the hole the caller's memory
// leaves. readInto copies the next record into dst and returns the copy;
// open maps the other reader and returns its first view. ReadInto must
// copy that view into new memory, leaving it as it was. Skips if the
// kernel maps the buffer elsewhere: one try only, since memory once a
// buffer's is searched for ever after. Run it in a child process (InChild):
// a write into the buffer faults.
func CheckCopyIntoRemappedMemory(t *testing.T, size, off int, readInto func(dst []byte) []byte, open func() []byte) {
	t.Helper()
	own, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	lent := own[off : off+64]
	if got := readInto(lent); unsafe.SliceData(got) != &lent[0] {
		t.Fatal("ReadInto did not copy into the caller's memory")
	}
	if err := unix.Munmap(own); err != nil {
		t.Fatal(err)
	}
	view := open()
	if unsafe.SliceData(view) != &lent[0] {
		t.Skipf("test set-up: the new buffer's view is at %p, not in the caller's old memory at %p", view, lent)
	}
	before := bytes.Clone(view)
	if got := readInto(view); unsafe.SliceData(got) == unsafe.SliceData(view) {
		t.Fatal("ReadInto copied into another reader's buffer")
	}
	if !bytes.Equal(view, before) {
		t.Fatal("the other reader's buffer changed")
	}
}
