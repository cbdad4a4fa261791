//go:build linux

package upstreambench

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadResults(t *testing.T) {
	const runs = "goos: linux\nBenchmarkDrain/size=16/mode=upstream/touch=head 10 1 ns/op\n# modes run: late\n"
	for _, tc := range []struct {
		name, content string
		label, role   string
		modes         []string
		wantErr       string
	}{
		{
			name: "header Run writes",
			content: "kernel: 6.18\n# upstreambench head: cilium/ebpf at main@abc: with a colon\n# source: /src, commit abc\n" +
				"# modes run: upstream lease-batch records\n# absent: mode=peek: why\n" + runs,
			label: "main@abc: with a colon", role: "head", modes: []string{"upstream", "lease-batch", "records"},
		},
		{name: "plain go test output", content: runs[:strings.Index(runs, "#")], wantErr: "not a results file of make bench-upstream"},
		{name: "side without modes", content: "# upstreambench base: cilium/ebpf at v0.22.0\n" + runs, wantErr: "not a results file"},
		{name: "header naming no side", content: "# upstreambench base v0.22.0\n", wantErr: "names no side"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "head.txt")
			writeFile(t, path, tc.content)
			r, err := ReadResults(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ReadResults = %+v, %v; want an error saying %q", r, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Label != tc.label || r.Role != tc.role || !slices.Equal(r.Modes, tc.modes) || r.Path != path {
				t.Fatalf("ReadResults = %+v, want label %q, role %q, modes %v", r, tc.label, tc.role, tc.modes)
			}
			if !r.has("records") || r.has("peek") || r.labelled() != tc.label+"="+path {
				t.Fatalf("has(records) %v, has(peek) %v, labelled %q", r.has("records"), r.has("peek"), r.labelled())
			}
		})
	}
}

func TestReadRunNeedsBothSides(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "base.txt"), "# upstreambench base: cilium/ebpf at v0.22.0\n# modes run: upstream\n")
	if _, _, err := ReadRun(dir); err == nil || !strings.Contains(err.Error(), "head.txt") {
		t.Fatalf("ReadRun of a directory without head.txt: %v, want an error naming it", err)
	}
}
