package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/tools/api"
	"github.com/ebpf-zc/ebpf/internal/tools/modfiles"
)

// maxReadmeLines bounds README.md: what it is, the two commands,
// switching, the reading styles and links; the rest lives in docs/.
const maxReadmeLines = 200

// checkout is this checkout's README.md and CHANGELOG.md, read once for
// the tests that judge them: their state, and the names of ringbuf and
// perf here and in the release README.md names.
type checkout struct {
	state             State
	current, released Names
	skip              string
}

var (
	checkoutOnce sync.Once
	checkoutRead checkout
	checkoutErr  error
)

// readCheckout returns this checkout's checkout, skipping the test
// where git cannot show the release README.md names.
func readCheckout(t *testing.T) checkout {
	t.Helper()
	checkoutOnce.Do(func() { checkoutRead, checkoutErr = loadCheckout() })
	if checkoutErr != nil {
		t.Fatal(checkoutErr)
	}
	if checkoutRead.skip != "" {
		t.Skip(checkoutRead.skip)
	}
	return checkoutRead
}

func loadCheckout() (checkout, error) {
	root, err := modfiles.Root(".")
	if err != nil {
		return checkout{skip: "not a git checkout: " + err.Error()}, nil
	}
	s, err := Read(root)
	if err != nil {
		return checkout{}, err
	}
	if s.Commit == "" {
		if isShallow, _ := shallow(root); isShallow {
			return checkout{skip: "a shallow clone lacks commit " + s.Install.Commit + ", which README.md names (git fetch --unshallow)"}, nil
		}
	}
	c := checkout{state: s}
	if s.Commit == "" {
		return c, nil
	}
	if c.current, err = LoadNames(root, false); err != nil {
		return checkout{}, err
	}
	if c.released, err = LoadNamesAt(root, s.Commit); err != nil {
		return checkout{}, err
	}
	return c, nil
}

// TestReadme holds README.md and CHANGELOG.md together: README.md's
// release is CHANGELOG.md's newest, named by the commit that adds its
// entry, and README.md documents no name of ringbuf or perf that release
// lacks, unless it marks it newer.
func TestReadme(t *testing.T) {
	c := readCheckout(t)
	problems := c.state.CheckVersions()
	if c.state.Commit != "" {
		named, documented := c.state.CheckNames(c.current, c.released)
		problems = append(problems, named...)
		t.Logf("README.md names %s, commit %s, and documents %d of its names", c.state.Install.Version, short(c.state.Commit), len(objects(documented)))
	}
	if c.state.Cutting {
		t.Logf("HEAD adds %s to CHANGELOG.md; the next commit names it in README.md", c.state.Changelog.Newest())
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// objects returns the objects the documented names name, once each.
func objects(documented []Documented) []api.Object {
	seen := make(map[string]bool)
	var all []api.Object
	for _, d := range documented {
		for _, o := range d.Objects {
			if !seen[o.Qualified()] {
				seen[o.Qualified()] = true
				all = append(all, o)
			}
		}
	}
	return all
}

// TestReadmeLength holds README.md to maxReadmeLines.
func TestReadmeLength(t *testing.T) {
	readme := readRootFile(t, "README.md")
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, above %d: move detail to docs/", n, maxReadmeLines)
	}
}

// TestReadmeBenchTargets: README.md names make bench-<family> for every
// benchmark family benchrun lists (make bench for the ringbuf one), and
// make bench-upstream.
func TestReadmeBenchTargets(t *testing.T) {
	root := rootDir(t)
	cmd := exec.Command("go", "run", "./internal/cmd/benchrun", "-list")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("benchrun -list: %v (it builds on Linux only)", err)
	}
	readme := readRootFile(t, "README.md")
	targets := []string{"make bench", "make bench-upstream"}
	for _, family := range strings.Fields(string(out)) {
		if family != "ringbuf" {
			targets = append(targets, "make bench-"+family)
		}
	}
	for _, target := range targets {
		if !strings.Contains(readme, "`"+target+"`") {
			t.Errorf("README.md does not name `%s`", target)
		}
	}
}

func rootDir(t *testing.T) string {
	t.Helper()
	root, err := modfiles.Root(".")
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	return root
}

func readRootFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rootDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLibbpfDoc: every name of ours docs/libbpf.md writes with its
// package or type (`perf.NewCPUReader`, `Reader.Positions`) is in this
// checkout's API, so that the page follows a rename.
func TestLibbpfDoc(t *testing.T) {
	c := readCheckout(t)
	if c.current == nil {
		t.Skip("README.md names no commit of this repository: TestReadme says why")
	}
	doc := readRootFile(t, filepath.Join("docs", "libbpf.md"))
	checked := 0
	for _, m := range Mentions(doc) {
		if !m.Explicit && len(m.Path) < 2 {
			continue
		}
		checked++
		if len(c.current.Resolve(m)) == 0 {
			t.Errorf("docs/libbpf.md:%d: `%s` names %s, which ringbuf and perf lack", m.Line, m.Text, m.Name())
		}
	}
	if checked == 0 {
		t.Error("docs/libbpf.md names none of ours with its package or type: is it read right?")
	}
}
