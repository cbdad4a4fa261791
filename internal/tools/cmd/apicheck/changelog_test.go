package main

import (
	"maps"
	"slices"
	"testing"
)

func TestUnreleasedNames(t *testing.T) {
	changelog := "# Changelog\n\n" +
		"## [Unreleased]\n\n### Removed\n\n- `ringbuf.Reader.Peek` and `perf.ErrCorrupt`, see `go doc`.\n\n" +
		"## [v0.1.0]\n\n- `ringbuf.Reader.Records`\n"
	got := slices.Sorted(maps.Keys(unreleasedNames(changelog)))
	want := []string{"perf.ErrCorrupt", "ringbuf.Reader.Peek"}
	if !slices.Equal(got, want) {
		t.Errorf("unreleasedNames = %q, want %q", got, want)
	}
	if names := unreleasedNames("## [v0.1.0]\n\n- `ringbuf.Reader.Peek`\n"); len(names) != 0 {
		t.Errorf("a released entry's names count: %q", slices.Sorted(maps.Keys(names)))
	}
}

func TestQualify(t *testing.T) {
	for _, tt := range []struct{ message, want string }{
		{"(*Reader).Peek: removed", "ringbuf.Reader.Peek"},
		{"Reader.Close: changed from func() error to func()", "ringbuf.Reader.Close"},
		{"Record.Ring: removed", "ringbuf.Record.Ring"},
		{"ErrClosed: removed", "ringbuf.ErrClosed"},
	} {
		if got := qualify("ringbuf", tt.message); got != tt.want {
			t.Errorf("qualify(%q) = %q, want %q", tt.message, got, tt.want)
		}
	}
}
