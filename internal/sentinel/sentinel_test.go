package sentinel

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestError(t *testing.T) {
	corrupt := New("ring corrupt", io.ErrUnexpectedEOF)
	other := New("ring corrupt", io.ErrUnexpectedEOF)
	wrapped := fmt.Errorf("read: %w", corrupt)
	for _, tc := range []struct {
		name string
		err  error
		is   error
		want bool
	}{
		{"itself", wrapped, corrupt, true},
		{"the general error", wrapped, io.ErrUnexpectedEOF, true},
		{"another sentinel with the same text", wrapped, other, false},
		{"the general error alone is not the sentinel", io.ErrUnexpectedEOF, corrupt, false},
	} {
		if got := errors.Is(tc.err, tc.is); got != tc.want {
			t.Errorf("%s: errors.Is(%q, %q) = %v, want %v", tc.name, tc.err, tc.is, got, tc.want)
		}
	}
	if got := wrapped.Error(); got != "read: ring corrupt" {
		t.Errorf("message %q, want %q", got, "read: ring corrupt")
	}
}
