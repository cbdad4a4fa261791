package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// importerCilium is the cilium/ebpf the importer starts on: the oldest
// release ours supports, which adding ours must not raise.
const importerCilium = "v0.20.0"

// importerGoLine is the importer's go line, cilium/ebpf v0.22.0's: adding
// ours must not raise it either.
const importerGoLine = "1.25.0"

// knownRaises are the releases that raise the importer's cilium/ebpf, to
// what: v0.1.0's go.mod requires v0.22.0 (CHANGELOG.md says so under
// v0.1.0; README.md says since when we require v0.20.0). A release is
// immutable, so this list only grows by mistake.
var knownRaises = map[string]string{"v0.1.0": "v0.22.0"}

// TestImporter follows README.md's install line as a user on cilium/ebpf
// v0.20.0 would: a fresh module on that release runs the line's go get,
// with our module served from a file GOPROXY made from the commit the
// line names (x/mod/zip, as the go command zips it), then builds a
// program that uses every name README.md documents for that release.
// Its cilium/ebpf and go line must stay where they were, and none of our
// tooling may reach its module graph. Once tagged, the same with
// @version. Other modules come from the module cache, else the Go
// module proxy: without it the test skips and says so.
func TestImporter(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not in PATH")
	}
	c := readCheckout(t)
	if problems := c.state.CheckVersions(); len(problems) > 0 {
		t.Skipf("README.md and CHANGELOG.md disagree (TestReadme says how): %s", problems[0])
	}
	_, documented := c.state.CheckNames(c.current, c.released)
	in := c.state.Install
	program := Program(in.Version, objects(documented))
	wantCilium := importerCilium
	if raise, ok := knownRaises[in.Version]; ok {
		wantCilium = raise
	}
	tooling := toolingModules(t, c.state.Root)
	// What cilium/ebpf brings by itself (v0.22.0's tool directive brings
	// staticcheck) is not ours to answer for.
	// One module cache for the whole test, its own: nothing of an
	// earlier run is taken for our module, and the checksum database is
	// asked once.
	modCache := t.TempDir()
	baseline := t.TempDir()
	baseEnv := importerEnv(t, t.TempDir(), modCache)
	writeFile(t, filepath.Join(baseline, "go.mod"), "module example.com/baseline\n\ngo "+importerGoLine+"\n")
	goCmd(t, baseline, baseEnv, "get", "github.com/cilium/ebpf@"+wantCilium)
	baseGraph := goCmd(t, baseline, baseEnv, "list", "-m", "all")
	baseSum := read(t, filepath.Join(baseline, "go.sum"))

	for _, tt := range []struct {
		name string
		// tag is the version the proxy serves the commit as: none
		// until it is tagged.
		tag  string
		args []string
	}{
		{"until tagged", "", in.Args},
		{"once tagged", in.Version, []string{"get", ModulePath + "@" + in.Version}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proxy := t.TempDir()
			served, err := WriteProxy(proxy, c.state.Root, c.state.Commit, tt.tag, []string{in.Commit, c.state.Commit})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			env := importerEnv(t, proxy, modCache)
			writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/importer\n\ngo "+importerGoLine+"\n")
			goCmd(t, dir, env, "get", "github.com/cilium/ebpf@"+importerCilium)
			goCmd(t, dir, env, tt.args...)
			writeFile(t, filepath.Join(dir, "main.go"), program)
			goCmd(t, dir, env, "mod", "tidy")
			goCmd(t, dir, env, "build", "-o", os.DevNull, ".")

			if got := goCmd(t, dir, env, "list", "-m", "-f", "{{.Version}}", ModulePath); got != served {
				t.Errorf("the importer has our module at %s, want %s", got, served)
			}
			if got := goCmd(t, dir, env, "list", "-m", "-f", "{{.Version}}", "github.com/cilium/ebpf"); got != wantCilium {
				t.Errorf("the importer, on cilium/ebpf %s, is on %s after go %s; want %s", importerCilium, got, strings.Join(tt.args, " "), wantCilium)
			}
			goMod := read(t, filepath.Join(dir, "go.mod"))
			f, err := modfile.Parse("go.mod", []byte(goMod), nil)
			if err != nil {
				t.Fatal(err)
			}
			if f.Go == nil || f.Go.Version != importerGoLine || f.Toolchain != nil {
				t.Errorf("the importer's go line is no longer go %s alone:\n%s", importerGoLine, goMod)
			}
			graph := goCmd(t, dir, env, "list", "-m", "all")
			sum := read(t, filepath.Join(dir, "go.sum"))
			for _, mod := range tooling {
				inGraph := strings.Contains(graph, "\n"+mod+" ") && !strings.Contains(baseGraph, "\n"+mod+" ")
				inSum := strings.Contains(sum, mod+" ") && !strings.Contains(baseSum, mod+" ")
				if inGraph || inSum {
					t.Errorf("our tooling's %s reaches the importer's module graph (go.sum: %v)", mod, inSum)
				}
			}
			t.Logf("go %s: %s at %s, cilium/ebpf %s; %d names of README.md built", strings.Join(tt.args, " "), ModulePath, served, wantCilium, strings.Count(program, "\n\t_ = "))
		})
	}
}

// toolingModules are the modules internal/tools requires that this
// module's graph lacks: what only the tooling brings.
func toolingModules(t *testing.T, root string) []string {
	t.Helper()
	toolsMod := read(t, filepath.Join(root, "internal", "tools", "go.mod"))
	f, err := modfile.Parse("go.mod", []byte(toolsMod), nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}}", "all")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all in %s: %v", root, err)
	}
	ours := make(map[string]bool)
	for _, path := range strings.Fields(string(out)) {
		ours[path] = true
	}
	var tooling []string
	for _, r := range f.Require {
		if !ours[r.Mod.Path] {
			tooling = append(tooling, r.Mod.Path)
		}
	}
	if len(tooling) == 0 {
		t.Fatal("internal/tools/go.mod requires nothing this module lacks: is it read right?")
	}
	return tooling
}

// importerEnv is the environment of the importer's go commands: our
// module from the proxy in proxyDir, every other from the user's module
// cache (itself a file proxy) or else GOPROXY; modCache as the module
// cache; no checksum database for our module, which the public one does
// not know; the local toolchain.
func importerEnv(t *testing.T, proxyDir, modCache string) []string {
	t.Helper()
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	proxies := "file://" + proxyDir + ",file://" + filepath.Join(goEnv("GOMODCACHE"), "cache", "download")
	if upstream := goEnv("GOPROXY"); upstream != "" && upstream != "off" {
		proxies += "," + upstream
	}
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GOFLAGS", "GOPROXY", "GOMODCACHE", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GONOPROXY", "GOWORK", "GOTOOLCHAIN":
		default:
			env = append(env, kv)
		}
	}
	return append(env,
		"GOPROXY="+proxies,
		"GOMODCACHE="+modCache,
		"GOFLAGS=-modcacherw", // so that t.TempDir can remove it
		"GONOSUMDB="+ModulePath,
		"GOWORK=off",
		"GOTOOLCHAIN=local",
	)
}

// goCmd runs the go command in dir and returns its output, trimmed. It
// skips the test when the failure is a network one: the Go module proxy
// or checksum database is out of reach, which says nothing of ours.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil {
		return strings.TrimSpace(string(out))
	}
	for _, sign := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "TLS handshake", "proxyconnect", "network is unreachable"} {
		if strings.Contains(stderr.String(), sign) {
			t.Skipf("go %s: the Go module proxy or checksum database is out of reach (%s):\n%s", strings.Join(args, " "), sign, stderr.String())
		}
	}
	t.Fatalf("go %s in the importer: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	return ""
}

func writeFile(t *testing.T, path, content string) {
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
