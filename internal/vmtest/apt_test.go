package vmtest

import (
	"slices"
	"strings"
	"testing"
)

// metaStanza is apt-cache show output for a 7.x meta package, abridged.
const metaStanza = `Package: linux-image-cloud-amd64
Source: linux-signed-amd64 (7.3.4+1~bpo13+1)
Version: 7.3.4-1~bpo13+1
Depends: linux-base-cloud-amd64 (= 7.3.4-1~bpo13+1), linux-image-7.3.4+deb13-cloud-amd64 (= 7.3.4-1~bpo13+1), linux-modules-cloud-amd64 (= 7.3.4-1~bpo13+1)
Description: Linux for x86-64 cloud (meta-package)
 This package depends on the latest Linux kernel
 and modules for use on cloud platforms.

Package: linux-image-cloud-amd64
Version: 7.2.13-1
`

func TestParseStanza(t *testing.T) {
	st := ParseStanza(metaStanza)
	for k, want := range map[string]string{
		"Package":     "linux-image-cloud-amd64",
		"Version":     "7.3.4-1~bpo13+1",
		"Description": "Linux for x86-64 cloud (meta-package)\nThis package depends on the latest Linux kernel\nand modules for use on cloud platforms.",
	} {
		if st[k] != want {
			t.Errorf("%s = %q, want %q", k, st[k], want)
		}
	}
	if got := ParseStanza("\n\n"); len(got) != 0 {
		t.Errorf("empty text gave %v", got)
	}
}

func TestParseDepends(t *testing.T) {
	for _, tt := range []struct {
		field string
		want  []Dependency
	}{
		{"", nil},
		{"kmod", []Dependency{{Name: "kmod"}}},
		{
			"kmod, linux-base (>= 4.3~), initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool",
			[]Dependency{{"kmod", ""}, {"linux-base", ">= 4.3~"}, {"initramfs-tools", ">= 0.120+deb8u2"}, {"linux-initramfs-tool", ""}},
		},
		{"python3:any (>=3.9)", []Dependency{{"python3", ">=3.9"}}},
	} {
		if got := ParseDepends(tt.field); !slices.Equal(got, tt.want) {
			t.Errorf("ParseDepends(%q) = %v, want %v", tt.field, got, tt.want)
		}
	}
}

func TestImageDeps(t *testing.T) {
	for _, tt := range []struct {
		depends string
		want    []string
	}{
		// Up to 6.x the meta package points at the image package itself.
		{"linux-image-6.1.0-50-cloud-amd64 (= 6.1.176-1)", []string{"linux-image-6.1.0-50-cloud-amd64"}},
		// From 7.x the image package points on to linux-binary-*.
		{
			"dracut | initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool, linux-base-7.3.4+deb13-cloud-amd64 (= 7.3.4-1~bpo13+1), linux-binary-7.3.4+deb13-cloud-amd64 (= 7.3.4-1~bpo13+1), linux-modules-7.3.4+deb13-cloud-amd64 (= 7.3.4-1~bpo13+1)",
			[]string{"linux-binary-7.3.4+deb13-cloud-amd64"},
		},
		{"linux-image-7.3.4+deb13-cloud-amd64-dbg", nil},
	} {
		if got := imageDeps(Stanza{"Depends": tt.depends}); !slices.Equal(got, tt.want) {
			t.Errorf("imageDeps(%q) = %q, want %q", tt.depends, got, tt.want)
		}
	}
}

// The private configuration must keep apt away from the machine's own
// configuration and state.
func TestAptConfigIsPrivate(t *testing.T) {
	a := &Apt{Root: "/c/apt/6.1", Mirror: "http://m.example", Suites: []Suite{{"debian", "bookworm"}, {"debian-security", "bookworm-security"}}}
	conf := a.Config()
	for _, want := range []string{
		`Dir::Etc::main "/dev/null";`,
		`Dir::Etc::parts "/c/apt/6.1/etc/apt.conf.d";`,
		`Dir::Etc::sourcelist "/c/apt/6.1/etc/sources.list";`,
		`Dir::State::Lists "/c/apt/6.1/lists";`,
		`Dir::State::status "/c/apt/6.1/status";`,
		`Dir::Cache::archives "/c/apt/6.1/archives";`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("apt.conf lacks %s:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, `"/etc/apt`) || strings.Contains(conf, `"/var/`) {
		t.Errorf("apt.conf points into the machine's apt folders:\n%s", conf)
	}
	wantList := "deb [arch=amd64 signed-by=" + DebianKeyring + "] http://m.example/debian bookworm main\n" +
		"deb [arch=amd64 signed-by=" + DebianKeyring + "] http://m.example/debian-security bookworm-security main\n"
	if got := a.SourcesList(); got != wantList {
		t.Errorf("sources.list =\n%s\nwant\n%s", got, wantList)
	}
	if got := a.Preferences(); strings.Count(got, "Pin-Priority: 500") != 2 || !strings.Contains(got, "n=bookworm-security") {
		t.Errorf("preferences do not pin every suite at 500:\n%s", got)
	}
}
