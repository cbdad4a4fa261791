// Command ciliumcompat tests the library (ringbuf and perf) against other
// releases of cilium/ebpf than the one go.mod requires (the oldest it
// supports, which make test's own go test covers), such as the newest.
// Each runs in a throwaway copy of the checkout whose go.mod is moved to
// that release with go get, so the checkout's go.mod stays as it is:
//
//	ciliumcompat -versions v0.21.0,latest
//
// In each copy: go test ./ringbuf ./perf on this host (their tests skip
// where BPF is missing), and go vet of both, tests included, for
// windows, the other platform whose code differs. A version that
// resolves to the one go.mod requires is left out: make test's own
// go test covers it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
)

const upstreamPath = "github.com/cilium/ebpf"

func main() {
	versions := flag.String("versions", "latest", "comma-separated cilium/ebpf versions or queries (latest) to test against")
	flag.Parse()
	if err := run(strings.Split(*versions, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "ciliumcompat:", err)
		os.Exit(1)
	}
}

func run(versions []string) error {
	root, err := modfiles.Root(".")
	if err != nil {
		return err
	}
	required, err := goOutput(root, nil, "list", "-m", "-f", "{{.Version}}", upstreamPath)
	if err != nil {
		return err
	}
	var failed []string
	for _, version := range versions {
		if err := check(root, version, required); err != nil {
			fmt.Printf("ciliumcompat: cilium/ebpf %s: FAIL: %v\n", version, err)
			failed = append(failed, version)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("the library fails against cilium/ebpf %s", strings.Join(failed, ", "))
	}
	return nil
}

// check tests the library against cilium/ebpf at version in a copy of
// the checkout at root.
func check(root, version, required string) error {
	start := time.Now()
	dir, err := os.MkdirTemp("", "ciliumcompat-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := modfiles.Copy(root, dir); err != nil {
		return err
	}
	// The copy's go.mod and go.sum are the go command's to complete.
	scratch := []string{"GOFLAGS=-mod=mod"}
	if _, err := goOutput(dir, scratch, "get", upstreamPath+"@"+version); err != nil {
		return err
	}
	resolved, err := goOutput(dir, scratch, "list", "-m", "-f", "{{.Version}}", upstreamPath)
	if err != nil {
		return err
	}
	if resolved == required && version != required {
		fmt.Printf("ciliumcompat: cilium/ebpf %s is %s, the version go.mod requires: go test ./... covers it\n", version, resolved)
		return nil
	}
	if _, err := goOutput(dir, append(scratch, "GOOS=windows"), "vet", "./ringbuf/", "./perf/"); err != nil {
		return fmt.Errorf("windows: %w", err)
	}
	out, err := goOutput(dir, scratch, "test", "-count=1", "./ringbuf/", "./perf/")
	if err != nil {
		return err
	}
	fmt.Printf("ciliumcompat: cilium/ebpf %s (%s): go vet for windows and go test ok (%.0fs)\n%s\n",
		version, resolved, time.Since(start).Seconds(), indent(out))
	return nil
}

// goOutput runs the go command in dir, outside any workspace, with env
// added to ours, and returns its trimmed output.
func goOutput(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
