// Command vmtest runs the project's tests, and a benchmark smoke run,
// inside QEMU VMs on several Debian kernels: `make test-vms`.
//
// Usage:
//
//	go run ./internal/cmd/vmtest [-kernels "5.10 6.1"] [flags]
//
// Kernels are fetched once through a private apt configuration into
// .cache/vmtest; logs go to results/vms/<kernel>/. Up to -jobs VMs
// (default one per CPU) run at once. The exit status is 0
// when every package built and every kernel passed, 1 when something
// failed, 2 when the run could not start.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		kernels      = flag.String("kernels", envOr("KERNELS", ""), "kernels to boot: names from the matrix, or all, quick, oldest, newest (default all; $KERNELS)")
		pkgs         = flag.String("pkgs", envOr("PKGS", "./..."), "package patterns for go list, space separated ($PKGS)")
		accel        = flag.String("accel", envOr("ACCEL", vmtest.AccelAuto), "accelerator: auto (KVM until a kernel fails under it, then TCG), kvm or tcg ($ACCEL)")
		jobs         = flag.Int("jobs", envInt("JOBS", runtime.NumCPU()), "VMs to run at once, each on one CPU (default the CPU count; $JOBS)")
		vmTimeout    = flag.Duration("timeout", 20*time.Minute, "host-side time limit for each VM")
		watchdog     = flag.Duration("watchdog", vmtest.DefaultWatchdog, "stop a VM whose console and heartbeat stay silent this long")
		testTimeout  = flag.Duration("test-timeout", 10*time.Minute, "-test.timeout for each test binary in the guest")
		benchTimeout = flag.Duration("bench-timeout", 3*time.Minute, "time limit for each benchmark smoke run in the guest")
		bench        = flag.Bool("bench", true, "run the benchmark smoke after the tests")
		runRE        = flag.String("run", "", "passed to the test binaries as -test.run")
		refresh      = flag.Bool("refresh", false, "re-resolve and fetch kernels even when cached")
		offline      = flag.Bool("offline", false, "never fetch; boot only cached kernels")
		fetchOnly    = flag.Bool("fetch-only", false, "fetch the selected kernels and stop")
		list         = flag.Bool("list", false, "list the matrix and what is cached, and stop")
		cacheDir     = flag.String("cache", "", "kernel cache (default <module>/.cache/vmtest)")
		resultsDir   = flag.String("results", "", "log folder (default <module>/results/vms)")
	)
	var env envList
	flag.Var(&env, "env", "`KEY=VALUE` added to the guest environment (repeatable)")
	flag.Parse()

	moduleDir, err := findModuleDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmtest:", err)
		return 2
	}
	if *cacheDir == "" {
		*cacheDir = filepath.Join(moduleDir, ".cache", "vmtest")
	}
	if *resultsDir == "" {
		*resultsDir = filepath.Join(moduleDir, "results", "vms")
	}
	cache := vmtest.Cache{Dir: *cacheDir}
	selected, err := vmtest.SelectKernels(vmtest.Matrix, *kernels)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmtest:", err)
		return 2
	}
	if *jobs < 1 {
		fmt.Fprintln(os.Stderr, "vmtest: -jobs must be at least 1")
		return 2
	}
	if *list {
		listMatrix(cache)
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *fetchOnly {
		return fetch(ctx, cache, selected, *refresh)
	}

	r, err := vmtest.Run(ctx, vmtest.Options{
		ModuleDir:  moduleDir,
		Cache:      cache,
		ResultsDir: *resultsDir,
		Kernels:    selected,
		Patterns:   strings.Fields(*pkgs),
		Accel:      *accel,
		Jobs:       *jobs,
		VMTimeout:  *vmTimeout,
		Watchdog:   *watchdog,
		Plan: vmtest.PlanOptions{
			TestTimeout:  *testTimeout,
			BenchTimeout: *benchTimeout,
			Run:          *runRE,
			Bench:        *bench,
			Env:          env,
		},
		Refresh: *refresh,
		Offline: *offline,
		Log:     os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmtest:", err)
		return 2
	}
	var summary strings.Builder
	r.WriteSummary(&summary)
	fmt.Print(summary.String())
	if err := os.MkdirAll(*resultsDir, 0o755); err == nil {
		os.WriteFile(filepath.Join(*resultsDir, "summary.txt"), []byte(summary.String()), 0o644)
	}
	if !r.OK() {
		return 1
	}
	return 0
}

func fetch(ctx context.Context, cache vmtest.Cache, kernels []vmtest.Kernel, refresh bool) int {
	var archive *vmtest.Archive
	status := 0
	for _, k := range kernels {
		if ck, err := cache.Load(k.Name); err == nil && !refresh {
			fmt.Printf("%s: cached, %s %s (%s)\n", k.Name, ck.Package, ck.Version, ck.Release)
			continue
		}
		if archive == nil {
			a, err := vmtest.FindArchive(ctx, cache)
			if err != nil {
				fmt.Fprintln(os.Stderr, "vmtest:", err)
				return 2
			}
			fmt.Fprintf(os.Stderr, "vmtest: kernels from %s\n", a)
			archive = &a
		}
		t := time.Now()
		ck, err := vmtest.Fetch(ctx, cache, k, *archive, os.Stderr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "vmtest: %s: %v\n", k.Name, err)
			status = 1
			continue
		}
		fmt.Printf("%s: fetched %s %s (%s) in %.1fs\n", k.Name, ck.Package, ck.Version, ck.Release, time.Since(t).Seconds())
	}
	return status
}

func listMatrix(cache vmtest.Cache) {
	for _, k := range vmtest.Matrix {
		var suites []string
		for _, s := range k.Suites {
			suites = append(suites, s.Name)
		}
		state := "not cached"
		if ck, err := cache.Load(k.Name); err == nil {
			state = fmt.Sprintf("cached: %s %s (%s)", ck.Package, ck.Version, ck.Release)
		}
		fmt.Printf("%-5s %-36s %s\n", k.Name, strings.Join(suites, ","), state)
	}
}

// findModuleDir is the folder of the main module's go.mod.
func findModuleDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envInt is the integer in the environment variable name, or def when
// it is unset or not a number.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// envList collects repeated -env flags.
type envList []string

// String implements flag.Value.
func (e *envList) String() string { return strings.Join(*e, " ") }

// Set implements flag.Value.
func (e *envList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	*e = append(*e, v)
	return nil
}
