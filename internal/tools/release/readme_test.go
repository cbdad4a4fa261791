package release

import (
	"slices"
	"strings"
	"testing"
)

const commitA = "f7eceb3b54b770c851092da1fb90c0e291f869d9"

func TestParseInstall(t *testing.T) {
	good := "The current release is **v0.1.0**.\n\n```sh\n" + InstallLine("v0.1.0", commitA) + "\n```\n"
	in, err := ParseInstall(good)
	if err != nil {
		t.Fatal(err)
	}
	if in.Version != "v0.1.0" || in.Commit != commitA || in.Line != 4 || !slices.Equal(in.Args, []string{"get", ModulePath + "@" + commitA}) {
		t.Errorf("ParseInstall = %+v", in)
	}
	for _, tt := range []struct{ name, readme, want string }{
		{"no line", "The current release is **v0.1.0**.\n", "no install line"},
		{"two lines", good + InstallLine("v0.1.0", commitA) + "\n", "2 install lines"},
		{"sentence disagrees", strings.Replace(good, "**v0.1.0**", "**v0.2.0**", 1), "want one"},
		{"no sentence", strings.Replace(good, "The current release is **v0.1.0**.", "", 1), "want one"},
		{"tag disagrees", strings.Replace(good, "once tagged, @v0.1.0", "once tagged, @v0.2.0", 1), "once tagged"},
		{"not a release", strings.ReplaceAll(good, "v0.1.0", "v0.1"), "not a release version"},
		{"another module", strings.Replace(good, "ebpf-zc/ebpf@", "ebpf-zc/other@", 1), "not " + ModulePath},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseInstall(tt.readme)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseInstall: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestSetInstall(t *testing.T) {
	readme := "The current release is **v0.1.0**.\n\n```sh\n" + InstallLine("v0.1.0", commitA) + "\n```\nEnd.\n"
	got, err := SetInstall(readme, "v0.2.0", "0123456789abcdef0123456789abcdef01234567")
	if err != nil {
		t.Fatal(err)
	}
	want := "The current release is **v0.2.0**.\n\n```sh\n" + InstallLine("v0.2.0", "0123456789abcdef0123456789abcdef01234567") + "\n```\nEnd.\n"
	if got != want {
		t.Errorf("SetInstall:\n%s\nwant:\n%s", got, want)
	}
}

func TestMentions(t *testing.T) {
	readme := strings.Join([]string{
		"# Title with `Reader`",
		"",
		"A `Reader` reads. `ReadinessFD` came later (since v0.2.0); `Close`",
		"closes it, and `NewWriter` writes, since v0.2.0 too.",
		"",
		"| style | when |",
		"| --- | --- |",
		"| perf `Records`, `Batches` | since v0.2.0: loops |",
		"| `Peek`/`PeekInto` + `Consume` | one goroutine; see ringbuf `Records` |",
		"",
		"- `MultiReader.Positions(ring)` and `RingPositions{Consumer, Producer, Size}`: unreleased.",
		"- `perf.NewCPUReader`, `errors.Is`, `BPF_F_RB_OVERWRITE`, `FULL=1`, `rd.Records()`",
		"",
		"```go",
		"rd, err := ringbuf.NewReader(events) // not perf.Reader's",
		"```",
		"",
		"```sh",
		"make bench # ringbuf.Reader",
		"```",
	}, "\n")
	type short struct {
		Name  string
		Line  int
		Marks string
	}
	var got []short
	for _, m := range Mentions(readme) {
		got = append(got, short{m.Name(), m.Line, strings.Join(m.Marks, ",")})
	}
	want := []short{
		{"Reader", 1, ""},
		{"Reader", 3, ""},
		{"ReadinessFD", 3, "v0.2.0"},
		{"Close", 3, "v0.2.0"},
		{"NewWriter", 4, "v0.2.0"},
		{"perf.Records", 8, "v0.2.0"},
		{"perf.Batches", 8, "v0.2.0"},
		{"Peek", 9, ""},
		{"PeekInto", 9, ""},
		{"Consume", 9, ""},
		{"ringbuf.Records", 9, ""},
		{"MultiReader.Positions", 11, "unreleased"},
		{"RingPositions", 11, "unreleased"},
		{"perf.NewCPUReader", 12, ""},
		{"BPF_F_RB_OVERWRITE", 12, ""},
		{"ringbuf.NewReader", 15, ""},
		{"perf.Reader", 15, ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Mentions:\n%v\nwant:\n%v", got, want)
	}
}

func TestMarkedNewer(t *testing.T) {
	for _, tt := range []struct {
		marks []string
		want  bool
	}{
		{nil, false},
		{[]string{"v0.1.0"}, false},
		{[]string{"v0.2.0"}, true},
		{[]string{"v0.1.0", "v0.3.0"}, true},
		{[]string{Unreleased}, true},
	} {
		if got := (Mention{Marks: tt.marks}).MarkedNewer("v0.1.0"); got != tt.want {
			t.Errorf("marks %q: MarkedNewer(v0.1.0) = %v, want %v", tt.marks, got, tt.want)
		}
	}
}

func TestParseChangelog(t *testing.T) {
	c, err := ParseChangelog("# Changelog\n\n## The promise\n\n- kept\n\n## [Unreleased]\n\n### Added\n\n- `a`\n- `b`\n\n## [v0.2.0]\n\n- x\n\n## [v0.1.0]\n")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Releases, []string{"v0.2.0", "v0.1.0"}) || c.Unreleased != 7 || c.Entries != 2 || c.Newest() != "v0.2.0" {
		t.Errorf("ParseChangelog = %+v", c)
	}
	for _, bad := range []string{
		"## [v0.1.0]\n\n## [v0.2.0]\n",
		"## [v0.1.0]\n\n## [v0.1.0]\n",
		"## [v0.1.0]\n\n## [Unreleased]\n",
		"## [0.1.0]\n",
	} {
		if _, err := ParseChangelog(bad); err == nil {
			t.Errorf("ParseChangelog(%q) took it", bad)
		}
	}
}

func TestCut(t *testing.T) {
	changelog := "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- `ringbuf.Reader.Positions`\n\n## [v0.1.0]\n\nThe first.\n"
	got, err := Cut(changelog, "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Changelog\n\n## [Unreleased]\n\n## [v0.2.0]\n\n" + ReleaseNote("v0.2.0") + "\n\n### Added\n\n- `ringbuf.Reader.Positions`\n\n## [v0.1.0]\n\nThe first.\n"
	if got != want {
		t.Errorf("Cut:\n%s\nwant:\n%s", got, want)
	}
	c, err := ParseChangelog(got)
	if err != nil {
		t.Fatal(err)
	}
	if c.Newest() != "v0.2.0" || c.Entries != 0 {
		t.Errorf("after Cut: %+v, want v0.2.0 newest and an empty Unreleased entry", c)
	}
	for _, tt := range []struct{ changelog, version, want string }{
		{changelog, "v0.1.0", "not newer"},
		{changelog, "v0.2", "not a release version"},
		{got, "v0.3.0", "empty"},
		{"## [v0.1.0]\n", "v0.2.0", "no \"## [Unreleased]\""},
	} {
		if _, err := Cut(tt.changelog, tt.version); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Cut(%s): %v, want an error with %q", tt.version, err, tt.want)
		}
	}
}
