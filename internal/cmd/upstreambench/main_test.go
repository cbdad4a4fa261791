//go:build linux

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRejectsBadInput(t *testing.T) {
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "go.mod"), "module example.com/other\n")
	cilium := t.TempDir()
	writeFile(t, filepath.Join(cilium, "go.mod"), "module github.com/cilium/ebpf\n")
	if err := os.Mkdir(filepath.Join(cilium, "ringbuf"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no checkout", nil, "no checkout to measure"},
		{"stray argument", []string{"-upstream", "/x", "extra"}, "unexpected arguments"},
		{"bad size", []string{"-upstream", "/x", "-sizes", "12"}, `event size "12"`},
		{"nonexistent checkout", []string{"-upstream", "/nonexistent"}, "UPSTREAM=/nonexistent: no such directory"},
		{"not cilium/ebpf", []string{"-upstream", other}, `names module "example.com/other"`},
		{"no runs", []string{"-upstream", cilium, "-count", "0"}, "COUNT=0"},
		{"ring not a power of two", []string{"-upstream", cilium, "-ring", "1000"}, "RING=1000"},
		{"unknown flag", []string{"-bogus"}, "flag provided but not defined"},
		{"tables of nothing", []string{"-tables", "/nonexistent"}, "/nonexistent/base.txt"},
		{"plots of another directory", []string{"-plots", other}, "base.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%q) = %v, want an error saying %q", tc.args, err, tc.want)
			}
		})
	}
}

// writeFile writes content to path or fails t.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
