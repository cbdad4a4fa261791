package vmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// The tests in this file boot real kernels. They never download: they
// use what `make test-vms` left in .cache/vmtest, and skip, saying so,
// when QEMU or the kernels are missing or with -short.

// cachedForE2E returns the module root and the cached kernels, or skips.
func cachedForE2E(t *testing.T) (string, Cache, []*CachedKernel) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots VMs; skipped with -short")
	}
	skipInVM(t)
	requireQEMU(t)
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skipf("cpio not installed (Debian package cpio): %v", err)
	}
	root := moduleRoot(t)
	cache := Cache{Dir: filepath.Join(root, ".cache", "vmtest")}
	cached := cache.Cached(Matrix)
	if len(cached) == 0 {
		t.Skipf("no kernels cached in %s: `make test-vms` fetches them; this test never downloads", cache.Dir)
	}
	return root, cache, cached
}

// skipInVM skips a test of the host's side of the runner inside a test
// VM, where it has nothing to learn from the kernel and only adds time.
func skipInVM(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(wire.PlanPath); err == nil {
		t.Skip("already inside a test VM")
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

func kernelsByName(t *testing.T, names ...string) []Kernel {
	t.Helper()
	ks, err := SelectKernels(Matrix, strings.Join(names, " "))
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestBootCachedKernels runs this package's BPF feature test and its
// benchmark smoke on the oldest and the newest cached kernel, and checks
// that each feature is there exactly on the kernels new enough for it.
func TestBootCachedKernels(t *testing.T) {
	root, cache, cached := cachedForE2E(t)
	oldest, newest := cached[0], cached[len(cached)-1]
	r, err := Run(context.Background(), Options{
		ModuleDir:  root,
		Cache:      cache,
		ResultsDir: t.TempDir(),
		Kernels:    kernelsByName(t, oldest.Name, newest.Name),
		// Side by side, as make test-vms runs them.
		Jobs:      runtime.NumCPU(),
		Patterns:  []string{"./internal/vmtest"},
		Accel:     AccelAuto,
		VMTimeout: 5 * time.Minute,
		Plan: PlanOptions{
			TestTimeout: 2 * time.Minute, BenchTimeout: 2 * time.Minute,
			Run: "^TestKernelFeatures$", Bench: true,
		},
		Offline: true,
		Log:     testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	var summary strings.Builder
	r.WriteSummary(&summary)
	t.Log(summary.String())
	if !r.OK() {
		t.Fatal("the matrix run failed")
	}
	for _, kr := range r.Kernels {
		if kr.Console.Release != kr.Cached.Release {
			t.Errorf("%s: guest runs %q, want %q", kr.Kernel.Name, kr.Console.Release, kr.Cached.Release)
		}
		if kr.Boot.Booted <= 0 || kr.Boot.Booted > kr.Boot.Elapsed {
			t.Errorf("%s: boot time %v of %v", kr.Kernel.Name, kr.Boot.Booted, kr.Boot.Elapsed)
		}
		test := kr.Console.Step(modulePath+"/internal/vmtest", wire.PhaseTest)
		if test == nil {
			t.Fatalf("%s: no test step on the console", kr.Kernel.Name)
		}
		out := strings.Join(test.Output, "\n")
		for _, f := range []struct{ name, since string }{
			{"BPF_MAP_TYPE_RINGBUF", "5.8"},
			{"BPF_MAP_TYPE_USER_RINGBUF", "6.1"},
			{"BPF_MAP_TYPE_ARENA", "6.9"},
		} {
			want := "PASS"
			if CompareVersions(releaseVersion(kr.Cached.Release), f.since) < 0 {
				want = "SKIP"
			}
			if line := fmt.Sprintf("--- %s: TestKernelFeatures/%s ", want, f.name); !strings.Contains(out, line) {
				t.Errorf("%s (%s): want %q in:\n%s", kr.Kernel.Name, kr.Cached.Release, line, out)
			}
		}
		if b := kr.Console.Step(modulePath+"/internal/vmtest", wire.PhaseBench); !b.OK() || CountBenchmarks(b.Output) == 0 {
			t.Errorf("%s: benchmark smoke did not run: %+v", kr.Kernel.Name, b)
		}
	}
}

// releaseVersion turns a release such as "6.12.117+deb13-cloud-amd64" or
// "5.10.0-46-cloud-amd64" into "6.12" or "5.10".
func releaseVersion(release string) string {
	major, rest, _ := strings.Cut(release, ".")
	minor := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = rest[:i]
	}
	return major + "." + minor
}

func TestReleaseVersion(t *testing.T) {
	for release, want := range map[string]string{
		"5.10.0-46-cloud-amd64":      "5.10",
		"6.12.117+deb13-cloud-amd64": "6.12",
		"7.3.4+deb13-cloud-amd64":    "7.3",
		"6.18.44-fc-v769":            "6.18",
		"7.0-rc1":                    "7.0",
	} {
		if got := releaseVersion(release); got != want {
			t.Errorf("releaseVersion(%q) = %q, want %q", release, got, want)
		}
	}
}

// TestVMOutcomes makes a VM fail a test, panic and hang on purpose, on
// the oldest cached kernel, and checks that each is reported as what it
// is.
func TestVMOutcomes(t *testing.T) {
	root, cache, cached := cachedForE2E(t)
	for _, tt := range []struct {
		run     string
		timeout time.Duration
		want    Outcome
		detail  string
	}{
		{"^TestFail$", 3 * time.Minute, OutcomeTestsFailed, "outcomes test (exit 1)"},
		{"^TestPanic$", 3 * time.Minute, OutcomePanic, "Kernel panic - not syncing"},
		// Long enough to boot, short enough to keep the test quick.
		{"^TestHang$", 30 * time.Second, OutcomeHang, "outcomes test"},
	} {
		t.Run(tt.run, func(t *testing.T) {
			r, err := Run(context.Background(), Options{
				ModuleDir:  root,
				Cache:      cache,
				ResultsDir: t.TempDir(),
				Kernels:    kernelsByName(t, cached[0].Name),
				Patterns:   []string{"./internal/vmtest/testdata/outcomes"},
				Accel:      AccelAuto,
				VMTimeout:  tt.timeout,
				Plan: PlanOptions{
					TestTimeout: time.Hour, Run: tt.run,
					Env: []string{"VMTEST_OUTCOMES=1"},
				},
				Offline: true,
				Log:     testLog{t},
			})
			if err != nil {
				t.Fatal(err)
			}
			v := r.Kernels[0].Verdict
			if v.Outcome != tt.want || !strings.Contains(v.Detail, tt.detail) {
				t.Errorf("verdict %q, want %q with %q", v, tt.want, tt.detail)
			}
			if r.OK() {
				t.Error("the run is OK despite the fixture")
			}
		})
	}
}
