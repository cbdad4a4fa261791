package importer

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// importerGoLine is cilium/ebpf v0.22.0's go line: switching from it to
// us must not raise a user's.
const importerGoLine = "go 1.25.0"

// tooling are the modules of internal/tools: none may reach an importer's
// go.mod or go.sum.
var tooling = []string{
	"golang.org/x/perf",
	"gonum.org/",
	"honnef.co/go/tools",
	"github.com/aclements/go-moremath",
	"codeberg.org/go-",
	"git.sr.ht/~sbinet/",
	"github.com/ajstarks/svgo",
	"github.com/golang/freetype",
	"golang.org/x/image",
}

const importerMain = `package main

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/ebpf-zc/ebpf/perf"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

func main() {
	var events *ebpf.Map // a BPF_MAP_TYPE_RINGBUF map, loaded elsewhere
	if _, err := ringbuf.NewReader(events); err != nil {
		fmt.Println(err)
	}
	if _, err := perf.NewReader(events, 4096); errors.Is(err, ebpf.ErrNotSupported) {
		fmt.Println(err)
	}
}
`

// TestImporterModule makes a module on cilium/ebpf v0.22's go line that
// imports our ringbuf and perf (a replace directive names this checkout),
// runs go mod tidy and go build in it, and checks its go.mod and go.sum.
func TestImporterModule(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not in PATH: no toolchain to tidy the importer with")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example.com/importer\n\n" + importerGoLine + "\n\n" +
		"require github.com/ebpf-zc/ebpf v0.0.0\n\n" +
		"replace github.com/ebpf-zc/ebpf => " + repo + "\n"
	write(t, filepath.Join(dir, "go.mod"), goMod)
	write(t, filepath.Join(dir, "main.go"), importerMain)

	goCmd(t, dir, "mod", "tidy")
	goCmd(t, dir, "build", "./...")

	tidied := read(t, filepath.Join(dir, "go.mod"))
	if !strings.Contains(tidied, "\n"+importerGoLine+"\n") {
		t.Errorf("go mod tidy changed the importer's go line from %q:\n%s", importerGoLine, tidied)
	}
	if strings.Contains(tidied, "\ntoolchain ") {
		t.Errorf("go mod tidy added a toolchain line:\n%s", tidied)
	}
	sum := read(t, filepath.Join(dir, "go.sum"))
	for _, mod := range tooling {
		if strings.Contains(tidied, mod) {
			t.Errorf("the importer's go.mod names %s:\n%s", mod, tidied)
		}
		if strings.Contains(sum, mod) {
			t.Errorf("the importer's go.sum names %s", mod)
		}
	}
}

// goCmd runs the go command in dir with the local toolchain. It skips
// the test when the failure is a network one: the Go proxy (or the
// toolchain download) is out of reach, which says nothing of our module.
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	for _, sign := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "TLS handshake", "proxyconnect", "network is unreachable"} {
		if bytes.Contains(out, []byte(sign)) {
			t.Skipf("go %s: the Go proxy is unreachable (%s):\n%s", strings.Join(args, " "), sign, out)
		}
	}
	if bytes.Contains(out, []byte("toolchain")) && bytes.Contains(out, []byte("GOTOOLCHAIN=local")) {
		t.Skipf("go %s: the local Go toolchain is older than %s and may not download one:\n%s", strings.Join(args, " "), importerGoLine, out)
	}
	t.Fatalf("go %s in the importer: %v\n%s", strings.Join(args, " "), err, out)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
