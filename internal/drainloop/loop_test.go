//go:build linux

package drainloop_test

import (
	"encoding/binary"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/drainloop"
)

func TestTouch(t *testing.T) {
	// Words 1, 2, 3 and a trailing byte that no whole word covers.
	rec := []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9}
	for _, tc := range []struct {
		all  bool
		want uint64
		name string
	}{
		{all: false, want: 1, name: "head"},
		{all: true, want: 6, name: "all"},
	} {
		if got := drainloop.Touch(rec, tc.all); got != tc.want {
			t.Errorf("Touch(all=%v) = %d, want %d", tc.all, got, tc.want)
		}
		if got := drainloop.TouchName(tc.all); got != tc.name {
			t.Errorf("TouchName(%v) = %q, want %q", tc.all, got, tc.name)
		}
	}
}

// TestExpectedSum checks the closed form against touching records built
// as the producer writes them: word i of record seq holds seq+i.
func TestExpectedSum(t *testing.T) {
	for _, size := range []int{8, 16, 40, 4096} {
		for _, all := range []bool{false, true} {
			var sum uint64
			rec := make([]byte, size)
			for seq := uint64(7); seq < 7+5; seq++ {
				for i := 0; i < size/8; i++ {
					binary.NativeEndian.PutUint64(rec[8*i:], seq+uint64(i))
				}
				sum += drainloop.Touch(rec, all)
			}
			if got := drainloop.ExpectedSum(size, 7, 5, all); got != sum {
				t.Errorf("ExpectedSum(%d, all=%v) = %d, touched %d", size, all, got, sum)
			}
		}
	}
}
