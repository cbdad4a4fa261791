# Every command the project needs; README.md names the two that matter:
# `make bench` (the main job) and `make test` (every test).

GO      ?= go
# The benchmark families' settings are environment variables, read by
# benchrun (internal/benchfamily declares them with their defaults); a
# variable given on make's command line is in the environment of every
# command make runs. FULL=1 selects the reference runs (make bench: the
# run docs/bench-ringbuf.md's tables come from); COUNT sets the rounds,
# BENCHTIME the -benchtime of the timed runs (see bench-% below).
# bench-upstream takes them as make bench does (upstreambench reads them
# through the ringbuf family's description).
RESULTS ?= results
STAMP   := $(shell date -u +%Y%m%dT%H%M%SZ)

# make bench runs pinned to one CPU, so the scheduler does not move the
# benchmark between runs: PIN is a taskset CPU list, by default the last
# CPU this process may run on (Cpus_allowed_list); PIN=3 picks another,
# PIN= (empty) pins nothing.
PIN     ?= $(shell awk '/^Cpus_allowed_list:/ { n = split($$2, cpu, /[,-]/); print cpu[n] }' /proc/self/status 2>/dev/null)
TASKSET  = $(if $(PIN),$(if $(shell command -v taskset),taskset -c $(PIN)))
# The libbpf peer of the ringbuf benchmark needs cgo (a C compiler) and
# libbpf-dev. Expanded when used, so it sees what hostdeps installed.
LIBBPF   = $(shell pkg-config --exists libbpf 2>/dev/null && command -v $$($(GO) env CC) >/dev/null && echo -tags libbpf)
# The benchmark, plotting and lint tools are a module of their own,
# internal/tools, so that x/perf, gonum and staticcheck stay out of the
# module graph of a program that imports ours. make tools builds them
# into TOOLBIN (go's cache makes that a second when nothing changed);
# every target that runs one depends on it.
TOOLBIN   = $(CURDIR)/.cache/tools
BENCHSTAT = $(TOOLBIN)/benchstat
PLOT      = $(TOOLBIN)/benchplot
# BENCHRUN runs a benchmark family as internal/benchfamily describes it:
# it announces how many results and how long, writes the raw output to
# the results file (headed by a kernel: line) and shows progress, then
# writes its tables and plots. SUMMARY prints the family's summary from
# benchstat's output on that file.
# The benchmarks measure against cilium/ebpf CILIUM_BENCH's readers, newer
# than the oldest release go.mod requires for the library: BENCHRUN builds
# every go command it runs (and itself) with BENCHMOD, go.mod raised to
# CILIUM_BENCH (go's -modfile), so go.mod holds what an importer needs.
CILIUM_BENCH = v0.22.0
BENCHMOD  = $(CURDIR)/.cache/bench.mod
BENCHRUN  = GOFLAGS=-modfile=$(BENCHMOD) $(GO) run ./internal/cmd/benchrun
SUMMARY   = $(GO) run ./internal/cmd/benchsummary -benchstat $(BENCHSTAT)

.PHONY: all tools test lint bench bench-tables benchstat bench-plot test-vms deps-test deps-bench

all: test

# deps-test, deps-bench: the Debian packages make test and make bench use
# (gcc, libbpf-dev, pkg-config, qemu-system-x86, cpio, iproute2,
# shellcheck), installed when missing as root, named in one command
# otherwise (internal/cmd/hostdeps).
deps-test:
	@$(GO) run ./internal/cmd/hostdeps test
deps-bench:
	@$(GO) run ./internal/cmd/hostdeps bench

# tools: benchstat, staticcheck and our commands that use x/perf or gonum,
# built from internal/tools into TOOLBIN.
tools:
	@$(GO) -C internal/tools build -o $(TOOLBIN)/ golang.org/x/perf/cmd/benchstat honnef.co/go/tools/cmd/staticcheck ./cmd/...

# lint: formatting, vet and staticcheck (built from internal/tools), the checks CI
# refuses to land without; the libbpf build is checked where libbpf-dev
# and a C compiler are installed.
lint: tools
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(TOOLBIN)/staticcheck ./...
	@# The tools module: vetted, and checked from its own directory.
	$(GO) -C internal/tools vet ./...
	cd internal/tools && $(TOOLBIN)/staticcheck ./...
	$(if $(LIBBPF),$(GO) vet -tags libbpf ./ringbuf/ ./internal/libbpfdrain/ ./internal/libbpfwrite/,@echo "lint: go vet and staticcheck -tags libbpf left out: pkg-config finds no libbpf or no C compiler (make deps-test installs them)")
	$(if $(LIBBPF),$(TOOLBIN)/staticcheck -tags libbpf ./ringbuf/)
	@# The bench targets run only when asked: their recipes must at least
	@# parse as shell (make -n prints them, sh -n reads them), for every
	@# family benchrun -list names. make -n still
	@# runs the lines that call $$(MAKE), with their redirections: into a
	@# scratch RESULTS.
	@scratch=$$(mktemp -d) && for t in bench bench-upstream $$($(GO) run ./internal/cmd/benchrun -list | sed 's/^/bench-/'); do \
		recipe=$$($(MAKE) -s -n $$t RESULTS=$$scratch) && printf '%s\n' "$$recipe" | sh -n || \
		{ echo "lint: make $$t: its recipe is not valid shell"; rm -rf $$scratch; exit 1; }; done; rm -rf $$scratch
	@# The reader builds wherever cilium/ebpf does; the rigs are Linux only.
	for os in darwin windows freebsd; do GOOS=$$os $(GO) build ./... || exit 1; done
	GOOS=windows $(GO) vet ./ringbuf/ ./perf/
	@# 32-bit Linux: the kernel's positions are 32-bit words there (internal/ulong).
	for arch in 386 arm; do GOARCH=$$arch $(GO) build ./... && GOARCH=$$arch $(GO) vet ./... || exit 1; done
	@# The CI workflow (.github/workflows), which cannot run here: actionlint,
	@# built from internal/tools as staticcheck is, runs shellcheck on its
	@# run: scripts, but skips them silently without one: hence the path.
	@# shellcheck (make deps-test installs it) checks .ci/run too.
	@command -v shellcheck >/dev/null || { echo "lint: no shellcheck for the workflow's run: scripts and .ci/run (make deps-test installs it)"; exit 1; }
	$(GO) -C internal/tools build -o $(TOOLBIN)/ github.com/rhysd/actionlint/cmd/actionlint
	$(TOOLBIN)/actionlint -shellcheck=$$(command -v shellcheck)
	shellcheck .ci/run

# test: set-up, lint, every test under the race detector, the release
# checks, every benchmark once as a smoke test, and the test suite on
# every kernel of the matrix, its VMs side by side, one per CPU (under
# TCG on the 2-CPU hosts; TEST_KERNELS="oldest newest" narrows it).
# The release checks: the tools module's tests hold the module zip's
# bound (internal/tools/release); apicheck diffs the API of ringbuf and
# perf against cilium/ebpf v0.22.0 and our last release.
# The tests run against the cilium/ebpf go.mod requires, the oldest the
# library supports (v0.19.0's ringbuf has no Reader on windows, v0.17.3
# no ebpf.WindowsRingBuf: CHANGELOG.md); ciliumcompat tests the library
# against the newest in a throwaway copy (about a minute); the smoke runs
# every benchmark once, and the asm traps' tests, with BENCHMOD.
test: deps-test $(BENCHMOD)
	@$(MAKE) --no-print-directory lint
	$(GO) test -race -count=1 ./...
	$(GO) run ./internal/cmd/test32 -go $(GO)
	$(GO) -C internal/tools test -count=1 ./...
	$(TOOLBIN)/apicheck
	$(TOOLBIN)/ciliumcompat -versions latest
	RINGBUF_BENCH_RING=16777216 $(GO) test -modfile=$(BENCHMOD) $(LIBBPF) -run 'Trap$$' -bench . -benchtime 100x -count=1 ./...
	$(MAKE) test-vms KERNELS="$(or $(TEST_KERNELS),all)"

# BENCHMOD: go.mod with cilium/ebpf raised to CILIUM_BENCH, and its go.sum.
$(BENCHMOD): go.mod go.sum
	@mkdir -p $(@D) && cp go.mod $@ && cp go.sum $(basename $@).sum
	@$(GO) mod edit -require=github.com/cilium/ebpf@$(CILIUM_BENCH) $@
	@$(GO) mod tidy -modfile=$@

# test-vms: the tests and a benchmark smoke inside QEMU on Debian kernels.
# KERNELS narrows the set ("5.10 6.1"); the default is every kernel.
test-vms:
	$(GO) run ./internal/cmd/vmtest -kernels "$(KERNELS)"

# Every benchmark family (make bench-<family>) is described once, in
# internal/benchfamily: its go test commands, rounds, knobs with their
# defaults, tables, plots and summary; `go run ./internal/cmd/benchrun
# -list` names the families and `-family NAME -describe` says what one
# runs and takes. Knobs are environment variables, so a variable given on
# make's command line reaches them (make bench-<family> KNOB=value); a
# malformed value stops the target before it runs. COUNT sets the
# rounds of any family whose own count knob (<FAMILY>_COUNT) is unset,
# BENCHTIME the -benchtime of every timed run whose own knob is unset,
# FULL=1 the reference run where a family has one.
#
# bench-%: the family's plan and estimate, its rounds with progress, the
# raw output to the results file (OUT, by default
# $(RESULTS)/<family>-<time>.txt), benchstat's tables to
# <results>-tables.txt, the plots beside it, then the summary.
# bench-%-tables, bench-%-plots: the same tables and plots from a saved
# run (IN=file).
FAMILY_OUT = $(or $(OUT),$(RESULTS)/$*-$(STAMP).txt)
bench-%: tools $(BENCHMOD)
	@mkdir -p $(dir $(FAMILY_OUT))
	@$(BENCHRUN) -family $* -go $(GO) -pin '$(PIN)' $(if $(LIBBPF),-libbpf) -out $(FAMILY_OUT)
	@$(BENCHRUN) -family $* -tools $(TOOLBIN) -tables $(FAMILY_OUT) > $(basename $(FAMILY_OUT))-tables.txt
	@$(BENCHRUN) -family $* -tools $(TOOLBIN) -plots $(FAMILY_OUT)
	@$(SUMMARY) -kind $* -tables $(basename $(FAMILY_OUT))-tables.txt $(FAMILY_OUT)
bench-%-tables: tools $(BENCHMOD)
	@$(BENCHRUN) -family $* -tools $(TOOLBIN) -tables $(or $(IN),$(error make $@ IN=results-file, please))
bench-%-plots: tools $(BENCHMOD)
	@$(BENCHRUN) -family $* -tools $(TOOLBIN) -plots $(or $(IN),$(error make $@ IN=results-file, please))

# bench: the ringbuf family, after installing the libbpf peer's packages
# (deps-bench; in a make of its own, so that LIBBPF sees them). About 4
# minutes from a fresh clone; FULL=1 is the reference run
# docs/bench-ringbuf.md's tables come from (about 13), SIZES and RING
# set its sizes and ring. bench-tables and bench-plot are the family's
# tables and plots of a saved run.
bench: deps-bench
	@$(MAKE) --no-print-directory bench-ringbuf
bench-tables: bench-ringbuf-tables
bench-plot: bench-ringbuf-plots

# benchstat: compare two saved runs, OLD against NEW.
benchstat: tools
	@test -n "$(OLD)" -a -n "$(NEW)" || { echo "usage: make benchstat OLD=a.txt NEW=b.txt"; exit 2; }
	$(BENCHSTAT) $(OLD) $(NEW)

# bench-upstream: the drain benchmark (BenchmarkRead's fills, sizes,
# touches and sum checks) against two versions of cilium/ebpf: BASE, a
# version or a checkout (default: the version go.mod pins), and UPSTREAM, a
# checkout (main, a pull request's head). Each side is built in a scratch
# module, so go.mod stays as it is; the modes a side's ringbuf lacks are
# reported absent. Says how many results and how long first, shows
# progress, prints benchstat tables base against head per mode and every
# mode side by side at the head against cilium/ebpf's ReadInto, one table
# per touch variant (also in <OUT>/summary.txt), draws plots, and ends
# with the summary. OUT names the results directory. COUNT, BENCHTIME,
# SIZES, RING and PIN as for bench: with FULL unset, 6 runs of 50ms over
# the 8 default sizes, about 4 minutes a side with every mode.
UP_OUT = $(or $(OUT),$(RESULTS)/upstream-$(STAMP))
UPSTREAMBENCH = $(GO) run ./internal/cmd/upstreambench -tools $(TOOLBIN)
.PHONY: bench-upstream bench-upstream-tables bench-upstream-plots
bench-upstream: tools
	@$(UPSTREAMBENCH) -upstream "$(UPSTREAM)" $(if $(BASE),-base "$(BASE)") \
		$(if $(SIZES),-sizes "$(SIZES)") $(if $(RING),-ring $(RING)) \
		$(if $(TASKSET),-pin "$(TASKSET)") -out "$(UP_OUT)"
	@$(SUMMARY) -kind upstream -tables "$(UP_OUT)/summary.txt" "$(UP_OUT)"

# bench-upstream-tables, bench-upstream-plots: bench-upstream's tables and
# plots from a saved run (IN=its results directory).
bench-upstream-tables: tools
	@$(UPSTREAMBENCH) -tables "$(IN)"
bench-upstream-plots: tools
	@$(UPSTREAMBENCH) -plots "$(IN)"

