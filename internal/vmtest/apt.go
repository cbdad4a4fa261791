package vmtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DebianKeyring verifies the suites' Release files. It comes with the
// debian-archive-keyring package, present on every Debian system; on
// others (Ubuntu) [FindKeyring] takes it from the archive.
const DebianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// Apt runs apt-get and apt-cache on a private configuration under Root:
// own sources list, preferences, package lists, cache and status file.
// The machine's apt setup is neither read nor changed.
//
// The configuration is handed over with APT_CONFIG rather than only with
// -o options: apt reads the file named by APT_CONFIG before anything else,
// and since that file points Dir::Etc::parts and Dir::Etc::main elsewhere,
// /etc/apt/apt.conf.d (which on this machine adds DEP-11 downloads, for
// one) is never read. -o options are applied after those files.
type Apt struct {
	// Root holds the private tree; it is created on first use.
	Root string
	// Mirror is the base URL, such as "http://host".
	Mirror string
	// Suites are the suites in the private sources list.
	Suites []Suite
	// Keyring verifies the Release files; empty means DebianKeyring.
	Keyring string
	// Log receives apt's own output.
	Log io.Writer
}

func (a *Apt) path(elem ...string) string {
	return filepath.Join(append([]string{a.Root}, elem...)...)
}

// Config is the text of the private apt.conf.
func (a *Apt) Config() string {
	var b strings.Builder
	set := func(k, v string) { fmt.Fprintf(&b, "%s %q;\n", k, v) }
	set("Dir::Etc::main", "/dev/null")
	set("Dir::Etc::parts", a.path("etc", "apt.conf.d"))
	set("Dir::Etc::sourcelist", a.path("etc", "sources.list"))
	set("Dir::Etc::sourceparts", a.path("etc", "sources.list.d"))
	set("Dir::Etc::preferences", a.path("etc", "preferences"))
	set("Dir::Etc::preferencesparts", a.path("etc", "preferences.d"))
	set("Dir::Etc::trustedparts", a.path("etc", "trusted.gpg.d"))
	set("Dir::State", a.path("state"))
	set("Dir::State::Lists", a.path("lists"))
	set("Dir::State::status", a.path("status"))
	set("Dir::Cache", a.path("cache"))
	set("Dir::Cache::archives", a.path("archives"))
	set("Dir::Log", a.path("log"))
	set("APT::Architecture", "amd64")
	set("Acquire::Languages", "none")
	// Some mirrors serve frozen snapshots whose Release files are past
	// their Valid-Until date (sid's expires within a week); this
	// machine's own apt configuration turns the same checks off.
	// Signatures and package hashes are still verified.
	set("Acquire::Check-Valid-Until", "false")
	set("Acquire::Check-Date", "false")
	if os.Geteuid() == 0 {
		// Downloads land in root-owned folders of this tree, which apt's
		// default sandbox user _apt cannot write.
		set("APT::Sandbox::User", "root")
	}
	return b.String()
}

// SourcesList is the text of the private sources.list.
func (a *Apt) SourcesList() string {
	keyring := a.Keyring
	if keyring == "" {
		keyring = DebianKeyring
	}
	var b strings.Builder
	for _, s := range a.Suites {
		fmt.Fprintf(&b, "deb [arch=amd64 signed-by=%s] %s/%s %s main\n", keyring, a.Mirror, s.Archive, s.Name)
	}
	return b.String()
}

// Preferences pins every suite at 500. Backports and experimental-like
// suites default to 100 or 1, which would make apt prefer an older kernel
// from another listed suite; with equal pins the highest version wins.
func (a *Apt) Preferences() string {
	var b strings.Builder
	for _, s := range a.Suites {
		fmt.Fprintf(&b, "Package: *\nPin: release n=%s\nPin-Priority: 500\n\n", s.Name)
	}
	return b.String()
}

// setup writes the private tree.
func (a *Apt) setup() error {
	for _, d := range []string{
		"etc/apt.conf.d", "etc/sources.list.d", "etc/preferences.d", "etc/trusted.gpg.d",
		"state", "lists/partial", "cache", "archives/partial", "log",
	} {
		if err := os.MkdirAll(a.path(d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"etc/apt.conf":     a.Config(),
		"etc/sources.list": a.SourcesList(),
		"etc/preferences":  a.Preferences(),
		"status":           "",
	}
	for name, text := range files {
		if err := os.WriteFile(a.path(name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// command builds an apt command that uses the private configuration.
func (a *Apt) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "APT_CONFIG="+a.path("etc", "apt.conf"), "LC_ALL=C")
	return cmd
}

// Update writes the private tree and downloads the suites' package lists.
func (a *Apt) Update(ctx context.Context) error {
	if _, err := os.Stat(a.keyring()); err != nil {
		return fmt.Errorf("%w (install debian-archive-keyring)", err)
	}
	if err := a.setup(); err != nil {
		return err
	}
	cmd := a.command(ctx, "apt-get", "-q", "update")
	cmd.Stdout, cmd.Stderr = a.Log, a.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get update (private lists in %s): %w", a.path("lists"), err)
	}
	return nil
}

func (a *Apt) keyring() string {
	if a.Keyring != "" {
		return a.Keyring
	}
	return DebianKeyring
}

// Candidate returns the control stanza of the version apt would pick for
// pkg.
func (a *Apt) Candidate(ctx context.Context, pkg string) (Stanza, error) {
	// --no-all-versions: "only the candidate version will be displayed"
	// (apt-cache(8)).
	cmd := a.command(ctx, "apt-cache", "show", "--no-all-versions", pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache show %s: %w: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	st := ParseStanza(string(out))
	if st["Package"] != pkg {
		return nil, fmt.Errorf("apt-cache show %s: no stanza for it", pkg)
	}
	return st, nil
}

// Download fetches pkg at version into dir (apt-get download saves to the
// working directory) and returns the .deb's path.
func (a *Apt) Download(ctx context.Context, pkg, version, dir string) (string, error) {
	cmd := a.command(ctx, "apt-get", "-q", "download", pkg+"="+version)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = a.Log, a.Log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("apt-get download %s=%s: %w", pkg, version, err)
	}
	m, _ := filepath.Glob(filepath.Join(dir, pkg+"_*.deb"))
	if len(m) != 1 {
		return "", fmt.Errorf("apt-get download %s: expected one .deb in %s, found %d", pkg, dir, len(m))
	}
	return m[0], nil
}

// Stanza is one Debian control stanza: field name to value, continuation
// lines joined with newlines.
type Stanza map[string]string

// ParseStanza reads the first stanza of a control text.
func ParseStanza(text string) Stanza {
	st := Stanza{}
	last := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			if len(st) > 0 {
				break
			}
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last != "" {
				st[last] += "\n" + strings.TrimSpace(line)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		last = k
		st[k] = strings.TrimSpace(v)
	}
	return st
}

// Dependency is one package named in a Depends field.
type Dependency struct {
	Name string
	// Constraint is the version relation, such as "= 7.3.4-1~bpo13+1";
	// empty when there is none.
	Constraint string
}

// ParseDepends splits a Depends field. Alternatives ("a | b") are listed
// one after another, in order.
func ParseDepends(field string) []Dependency {
	var out []Dependency
	for _, group := range strings.Split(field, ",") {
		for _, alt := range strings.Split(group, "|") {
			alt = strings.TrimSpace(alt)
			if alt == "" {
				continue
			}
			name, rest, _ := strings.Cut(alt, " ")
			name, _, _ = strings.Cut(name, ":") // drop ":any" qualifiers
			d := Dependency{Name: name}
			if i, j := strings.Index(rest, "("), strings.Index(rest, ")"); i >= 0 && j > i {
				d.Constraint = strings.Join(strings.Fields(rest[i+1:j]), " ")
			}
			out = append(out, d)
		}
	}
	return out
}
