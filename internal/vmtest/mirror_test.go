package vmtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSourceURIs(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"one-line", "deb http://a.example/debian bookworm main\n", []string{"http://a.example/debian"}},
		{"options", "deb [arch=amd64 signed-by=/k.gpg] http://a.example/debian bookworm main\n", []string{"http://a.example/debian"}},
		{"comments and deb-src", "# deb http://x/debian a b\ndeb-src http://b.example/debian sid main\n", []string{"http://b.example/debian"}},
		{"deb822", "Types: deb\nURIs: http://c.example/debian http://d.example/debian\nSuites: trixie\n", []string{"http://c.example/debian", "http://d.example/debian"}},
		{"other lines", "Types: deb\nSuites: trixie\nrandom words\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sourceURIs(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("sourceURIs = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDebianMirror(t *testing.T) {
	for _, tt := range []struct {
		uri, want string
		ok        bool
	}{
		{"http://m.example/debian", "http://m.example", true},
		{"https://m.example/debian-security/", "https://m.example", true},
		{"http://m.example/ubuntu", "", false},
		{"file:///srv/debian", "", false},
		{"cdrom:[Debian]/", "", false},
	} {
		got, ok := debianMirror(tt.uri)
		if got != tt.want || ok != tt.ok {
			t.Errorf("debianMirror(%q) = %q, %v; want %q, %v", tt.uri, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFindMirror(t *testing.T) {
	t.Setenv(MirrorEnv, "")
	ubuntu := writeTemp(t, "sources.list", "deb http://archive.ubuntu.com/ubuntu noble main\n")
	deb := writeTemp(t, "debian.sources", "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n")
	for _, tt := range []struct {
		name       string
		env        string
		files      []string
		want, from string
	}{
		{"the machine's Debian mirror", "", []string{"/nonexistent/sources.list", ubuntu, deb}, "http://mirror.example", deb},
		// An Ubuntu runner: nothing of Debian's in its sources.
		{"no Debian archive", "", []string{ubuntu}, DefaultMirror, "the default"},
		{"no sources at all", "", nil, DefaultMirror, "the default"},
		{"override", "http://override.example/", []string{deb}, "http://override.example", "$" + MirrorEnv},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(MirrorEnv, tt.env)
			got, from := FindMirror(tt.files)
			if got != tt.want || !strings.HasPrefix(from, tt.from) {
				t.Errorf("FindMirror = %q from %q; want %q from %q…", got, from, tt.want, tt.from)
			}
		})
	}
}
