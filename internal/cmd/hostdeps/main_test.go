package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// fakeHost is a machine with the given commands and pkg-config modules;
// Install adds the packages' commands unless installErr is set.
type fakeHost struct {
	commands   map[string]bool
	modules    map[string]bool
	root       bool
	cc         string
	installErr error
	installed  [][]string
}

func (f *fakeHost) LookPath(name string) bool { return f.commands[name] }

func (f *fakeHost) Succeeds(name string, args ...string) bool {
	return name == "pkg-config" && f.commands[name] && len(args) == 2 && args[0] == "--exists" && f.modules[args[1]]
}

func (f *fakeHost) Exists(path string) bool {
	return path == "/usr/include/bpf/libbpf.h" && f.modules["libbpf"]
}

func (f *fakeHost) Root() bool { return f.root }

func (f *fakeHost) Getenv(name string) string {
	if name == "CC" {
		return f.cc
	}
	return ""
}

// provides maps a Debian package to what it puts on the fake machine.
var provides = map[string]string{
	"gcc": "gcc", "pkg-config": "pkg-config", "qemu-system-x86": "qemu-system-x86_64",
	"cpio": "cpio", "iproute2": "ip", "shellcheck": "shellcheck",
}

func (f *fakeHost) Install(pkgs []string, log io.Writer) error {
	f.installed = append(f.installed, pkgs)
	if f.installErr != nil {
		return f.installErr
	}
	for _, p := range pkgs {
		if p == "libbpf-dev" {
			f.modules["libbpf"] = true
			continue
		}
		f.commands[provides[p]] = true
	}
	return nil
}

// newHost makes a fake machine with the given commands on PATH.
func newHost(root bool, commands ...string) *fakeHost {
	f := &fakeHost{commands: map[string]bool{}, modules: map[string]bool{}, root: root}
	for _, c := range commands {
		f.commands[c] = true
	}
	return f
}

// everything is a machine with every package already there.
func everything(root bool) *fakeHost {
	f := newHost(root, "apt-get", "gcc", "pkg-config", "qemu-system-x86_64", "cpio", "ip", "shellcheck")
	f.modules["libbpf"] = true
	return f
}

func TestRun(t *testing.T) {
	for _, tt := range []struct {
		name        string
		target      string
		host        *fakeHost
		wantCode    int
		wantInstall []string // the one install expected, nil for none
		wantLog     string   // a part of what it prints or its error
	}{
		{"fresh machine, root", "test", newHost(true, "apt-get"), 0,
			[]string{"gcc", "pkg-config", "libbpf-dev", "qemu-system-x86", "cpio", "iproute2", "shellcheck"}, "installs gcc (cgo"},
		{"fresh machine, not root", "test", newHost(false, "apt-get"), 1, nil,
			"sudo sh -c 'apt-get update && apt-get install -y --no-install-recommends gcc pkg-config libbpf-dev qemu-system-x86 cpio iproute2 shellcheck'"},
		{"only qemu missing, root", "test", func() *fakeHost {
			f := everything(true)
			f.commands["qemu-system-x86_64"] = false
			return f
		}(), 0, []string{"qemu-system-x86"}, "installs qemu-system-x86"},
		{"nothing missing, not root", "test", everything(false), 0, nil, "has every package"},
		{"install fails, root", "test", func() *fakeHost {
			f := newHost(true, "apt-get", "gcc", "pkg-config", "qemu-system-x86_64", "ip", "shellcheck")
			f.modules["libbpf"] = true
			f.installErr = errors.New("apt-get update: exit status 100")
			return f
		}(), 1, []string{"cpio"}, "exit status 100"},
		{"no apt-get, not root", "test", newHost(false, "gcc"), 1, nil, "package manager"},
		{"CC names another compiler", "test", func() *fakeHost {
			f := everything(false)
			f.commands["gcc"] = false
			f.commands["clang"] = true
			f.cc = "clang -O2"
			return f
		}(), 0, nil, "has every package"},
		{"bench, libbpf missing, root", "bench", newHost(true, "apt-get", "gcc", "pkg-config"), 0,
			[]string{"libbpf-dev"}, "installs libbpf-dev"},
		{"bench, libbpf missing, not root", "bench", newHost(false, "apt-get", "gcc", "pkg-config"), 0, nil,
			"leaves out the libbpf peer (mode=libbpf skips): missing libbpf-dev"},
		{"bench, install fails, root", "bench", func() *fakeHost {
			f := newHost(true, "apt-get", "gcc", "pkg-config")
			f.installErr = errors.New("no network")
			return f
		}(), 0, []string{"libbpf-dev"}, "leaves out the libbpf peer"},
		{"bench ignores qemu", "bench", func() *fakeHost {
			f := everything(false)
			f.commands["qemu-system-x86_64"] = false
			return f
		}(), 0, nil, "has every package"},
		{"unknown target", "lint", everything(true), 2, nil, "unknown target"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log strings.Builder
			code, err := run(tt.target, tt.host, &log)
			if err != nil {
				log.WriteString(err.Error())
			}
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; output:\n%s", code, tt.wantCode, log.String())
			}
			if (code == 0) != (err == nil) {
				t.Errorf("exit code %d with error %v", code, err)
			}
			if !strings.Contains(log.String(), tt.wantLog) {
				t.Errorf("output lacks %q:\n%s", tt.wantLog, log.String())
			}
			switch {
			case tt.wantInstall == nil && len(tt.host.installed) > 0:
				t.Errorf("installed %v, want nothing", tt.host.installed)
			case tt.wantInstall != nil && (len(tt.host.installed) != 1 || !slices.Equal(tt.host.installed[0], tt.wantInstall)):
				t.Errorf("installed %v, want one install of %v", tt.host.installed, tt.wantInstall)
			}
		})
	}
}
