// Command hostdeps makes sure the host has the Debian packages that
// `make test` and `make bench` use, so a fresh machine with only Go and
// make needs no other command. The Makefile runs it first:
//
//	go run ./internal/cmd/hostdeps test   # everything make test needs; fails without it
//	go run ./internal/cmd/hostdeps bench  # the libbpf peer's needs; says so when it is left out
//
// As root it installs what is missing with apt-get (one update, then one
// install of only the missing packages). As any other user it prints the
// one command that would, and for test exits 1.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hostdeps test|bench")
		os.Exit(2)
	}
	code, err := run(os.Args[1], realHost{}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostdeps:", err)
	}
	os.Exit(code)
}

// host is what hostdeps asks of the machine; tests give a fake.
type host interface {
	// LookPath reports whether a command is on PATH.
	LookPath(name string) bool
	// Succeeds runs a command quietly and reports whether it exited 0.
	Succeeds(name string, args ...string) bool
	// Exists reports whether a file exists.
	Exists(path string) bool
	// Root reports whether this process may install packages.
	Root() bool
	// Install runs apt-get update once, then installs pkgs.
	Install(pkgs []string, log io.Writer) error
	// Getenv reads the environment.
	Getenv(name string) string
}

// requirement is one Debian package and how to tell it is there.
type requirement struct {
	// Package is the Debian package that provides it.
	Package string
	// For says what needs it, for the messages.
	For string
	// Present checks the host.
	Present func(h host) bool
}

// cCompiler is the C compiler cgo would use: $CC, else gcc.
func cCompiler(h host) string {
	if cc := strings.Fields(h.Getenv("CC")); len(cc) > 0 {
		return cc[0]
	}
	return "gcc"
}

// command says a requirement is met when a command is on PATH.
func command(name string) func(host) bool {
	return func(h host) bool { return h.LookPath(name) }
}

var (
	gcc = requirement{"gcc", "cgo: go test -race and the libbpf peer",
		func(h host) bool { return h.LookPath(cCompiler(h)) }}
	pkgConfig = requirement{"pkg-config", "finding libbpf", command("pkg-config")}
	libbpfDev = requirement{"libbpf-dev", "the libbpf peer, -tags libbpf", func(h host) bool {
		// The Makefile finds libbpf through pkg-config; without
		// pkg-config the header is the best sign left.
		if h.LookPath("pkg-config") {
			return h.Succeeds("pkg-config", "--exists", "libbpf")
		}
		return h.Exists("/usr/include/bpf/libbpf.h")
	}}
	qemu       = requirement{"qemu-system-x86", "the kernel matrix of make test-vms", command("qemu-system-x86_64")}
	cpio       = requirement{"cpio", "packing the test VMs' initramfs", command("cpio")}
	iproute2   = requirement{"iproute2", "the XDP benchmarks' network namespaces", command("ip")}
	shellcheck = requirement{"shellcheck", "make lint: the CI workflow's run: scripts and .ci/run", command("shellcheck")}
)

// targets lists what each make target needs. For bench every package
// serves the libbpf peer only, so bench goes on without them.
var targets = map[string]struct {
	needs    []requirement
	optional bool
}{
	"test":  {needs: []requirement{gcc, pkgConfig, libbpfDev, qemu, cpio, iproute2, shellcheck}},
	"bench": {needs: []requirement{gcc, pkgConfig, libbpfDev}, optional: true},
}

// missing lists the requirements the host lacks.
func missing(h host, needs []requirement) []requirement {
	var out []requirement
	for _, r := range needs {
		if !r.Present(h) {
			out = append(out, r)
		}
	}
	return out
}

// installCommand is the one command a user without root runs.
func installCommand(h host, reqs []requirement) string {
	pkgs := packageNames(reqs)
	if !h.LookPath("apt-get") {
		return "install with your system's package manager the equivalents of the Debian packages: " + pkgs
	}
	return "sudo sh -c 'apt-get update && apt-get install -y --no-install-recommends " + pkgs + "'"
}

func packageNames(reqs []requirement) string { return strings.Join(packageList(reqs), " ") }

func describe(reqs []requirement) string {
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.Package + " (" + r.For + ")"
	}
	return strings.Join(parts, ", ")
}

// run checks the packages of target, installs what is missing when it
// may, and returns the exit code with the error to print.
func run(target string, h host, log io.Writer) (int, error) {
	t, ok := targets[target]
	if !ok {
		return 2, fmt.Errorf("unknown target %q: want test or bench", target)
	}
	lack := missing(h, t.needs)
	if len(lack) == 0 {
		fmt.Fprintf(log, "hostdeps: make %s has every package it uses\n", target)
		return 0, nil
	}
	if h.Root() && h.LookPath("apt-get") {
		fmt.Fprintf(log, "hostdeps: make %s installs %s\n", target, describe(lack))
		err := h.Install(packageList(lack), log)
		if still := missing(h, t.needs); err == nil && len(still) > 0 {
			err = fmt.Errorf("still missing after apt-get install: %s", packageNames(still))
		}
		if err == nil {
			return 0, nil
		}
		if !t.optional {
			return 1, err
		}
		fmt.Fprintf(log, "hostdeps: installing failed: %v\n", err)
		lack = missing(h, t.needs)
	}
	if t.optional {
		fmt.Fprintf(log, "hostdeps: make %s leaves out the libbpf peer (mode=libbpf skips): missing %s; to include it: %s\n",
			target, describe(lack), installCommand(h, lack))
		return 0, nil
	}
	return 1, fmt.Errorf("make %s needs %s; install them as root with:\n\t%s", target, describe(lack), installCommand(h, lack))
}

func packageList(reqs []requirement) []string {
	names := make([]string, len(reqs))
	for i, r := range reqs {
		names[i] = r.Package
	}
	return names
}

// realHost is the machine hostdeps runs on.
type realHost struct{}

// LookPath implements host.
func (realHost) LookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// Succeeds implements host.
func (realHost) Succeeds(name string, args ...string) bool {
	return exec.Command(name, args...).Run() == nil
}

// Exists implements host.
func (realHost) Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Root implements host.
func (realHost) Root() bool { return os.Geteuid() == 0 }

// Getenv implements host.
func (realHost) Getenv(name string) string { return os.Getenv(name) }

// Install implements host.
func (realHost) Install(pkgs []string, log io.Writer) error {
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	for _, args := range [][]string{
		{"update", "-qq"},
		append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...),
	} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w", args[0], err)
		}
	}
	return nil
}
