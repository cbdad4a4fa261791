package bpftest

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/cilium/ebpf"
)

func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("map create: invalid argument"), false},
		{fmt.Errorf("load: %w", ebpf.ErrNotSupported), true},
		{fmt.Errorf("map create: %w", os.ErrPermission), true},
	} {
		if got := Unavailable(tc.err); got != tc.want {
			t.Errorf("Unavailable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
