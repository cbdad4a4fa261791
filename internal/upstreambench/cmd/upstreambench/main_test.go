package main

import (
	"io"
	"strings"
	"testing"
)

func TestRunRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no checkout", nil, "no checkout to measure"},
		{"stray argument", []string{"-upstream", "/x", "extra"}, "unexpected arguments"},
		{"bad size", []string{"-upstream", "/x", "-sizes", "12"}, `event size "12"`},
		{"nonexistent checkout", []string{"-upstream", "/nonexistent"}, "UPSTREAM=/nonexistent: no such directory"},
		{"not cilium/ebpf", []string{"-upstream", "../../testdata/othermodule"}, `names module "example.com/other"`},
		{"no runs", []string{"-upstream", "../../testdata/fakecilium", "-count", "0"}, "COUNT=0"},
		{"ring not a power of two", []string{"-upstream", "../../testdata/fakecilium", "-ring", "1000"}, "RING=1000"},
		{"unknown flag", []string{"-bogus"}, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%q) = %v, want an error saying %q", tc.args, err, tc.want)
			}
		})
	}
}
