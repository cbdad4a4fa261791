//go:build linux

package bpftest

import (
	"os"
	"strings"
	"testing"
)

// Resources is a snapshot of what the process holds outside Go's heap
// that a reader or writer must give back: its file descriptors, and its
// mappings of BPF ring buffers and perf event buffers.
type Resources struct {
	FDs      int // entries of /proc/self/fd
	Mappings int // lines of /proc/self/maps that map a BPF map or a perf event
}

// mappedFiles are the names /proc/self/maps gives a mapping of a BPF map
// (a ring buffer is two lines: its consumer page, and its producer page
// with the data area) and of a perf event's buffer. In these tests
// nothing else maps either.
var mappedFiles = []string{"anon_inode:bpf-map", "anon_inode:[perf_event]"}

// OpenResources reads /proc/self/maps and /proc/self/fd.
func OpenResources(tb testing.TB) Resources {
	tb.Helper()
	// The file first: the first file the process opens starts Go's
	// netpoller, an epoll descriptor and an eventfd that stay open, and
	// they must be there before the descriptors are counted (a directory
	// does not start it).
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		tb.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatal(err)
	}
	mappings := 0
	for line := range strings.Lines(string(maps)) {
		for _, name := range mappedFiles {
			if strings.HasSuffix(line, " "+name+"\n") {
				mappings++
			}
		}
	}
	return Resources{FDs: len(fds), Mappings: mappings}
}

// CheckOpened fails tb at once unless the process holds more descriptors
// and more mappings than before: what (e.g. "a new Reader") took none,
// and a test that counts them would see nothing.
func CheckOpened(tb testing.TB, before Resources, what string) {
	tb.Helper()
	if now := OpenResources(tb); now.FDs <= before.FDs || now.Mappings <= before.Mappings {
		tb.Fatalf("%s holds %+v, before %+v: the test sees nothing", what, now, before)
	}
}

// CheckNoLeaks fails tb if the process holds more mappings or descriptors
// than it did at before: what (e.g. "a closed Reader") left them behind.
func CheckNoLeaks(tb testing.TB, before Resources, what string) {
	tb.Helper()
	after := OpenResources(tb)
	if after.Mappings > before.Mappings {
		tb.Errorf("%s: %d mappings left behind (%d before, %d after)",
			what, after.Mappings-before.Mappings, before.Mappings, after.Mappings)
	}
	if after.FDs > before.FDs {
		tb.Errorf("%s: %d file descriptors left behind (%d before, %d after)",
			what, after.FDs-before.FDs, before.FDs, after.FDs)
	}
}

// StillMapped reports whether the process maps more BPF maps and perf
// event buffers than it did at before: a reader opened after before has
// not released its buffers yet.
func StillMapped(tb testing.TB, before Resources) bool {
	tb.Helper()
	return OpenResources(tb).Mappings > before.Mappings
}
