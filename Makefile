# Every command the project needs; README.md names the two that matter:
# `make bench` (the main job) and `make test` (every test).

GO      ?= go
# FULL=1 selects the reference runs docs/bench-ringbuf.md's tables come from; without it
# make bench answers in minutes (see bench below).
FULL    ?=
# Runs per benchmark: benchstat wants 6 for a confidence interval and a
# U-test at n=10 can show a difference at p=0.002 (n=3 cannot go below
# 0.1); 6 still gives p-values, 10 is the reference.
COUNT   ?= $(if $(FULL),10,6)
# Timed drain per benchmark run; the untimed fills cost about five times
# as much, so 50ms of draining is about 0.4 s a result.
BENCHTIME ?= 50ms
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
# BENCHRUN runs a target's go test commands: it announces how many results
# and how long, writes the raw output to the results file (headed by a
# kernel: line) and shows progress. SUMMARY prints the target's summary
# from benchstat's output on that file.
# The benchmarks measure against cilium/ebpf CILIUM_BENCH's readers, newer
# than the oldest release go.mod requires for the library: BENCHRUN builds
# every go command it runs (and itself) with BENCHMOD, go.mod raised to
# CILIUM_BENCH (go's -modfile), so go.mod holds what an importer needs.
CILIUM_BENCH = v0.22.0
BENCHMOD  = $(CURDIR)/.cache/bench.mod
BENCHRUN  = GOFLAGS=-modfile=$(BENCHMOD) $(GO) run ./internal/cmd/benchrun
SUMMARY   = $(GO) run ./internal/cmd/benchsummary -benchstat $(BENCHSTAT)

.PHONY: all tools test lint bench bench-tables benchstat bench-plot bench-k2u bench-k2u-tables bench-k2u-plots bench-rings bench-rings-tables bench-rings-plots bench-xdp bench-xdp-tables bench-xdp-plots bench-sockfilter bench-sockfilter-tables bench-sockfilter-plots test-vms deps-test deps-bench

all: test

# deps-test, deps-bench: the Debian packages make test and make bench use
# (gcc, libbpf-dev, pkg-config, qemu-system-x86, cpio, iproute2), installed
# when missing as root, named in one command otherwise (internal/cmd/hostdeps).
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
	@# parse as shell (make -n prints them, sh -n reads them). make -n still
	@# runs the lines that call $$(MAKE), with their redirections: into a
	@# scratch RESULTS.
	@scratch=$$(mktemp -d) && for t in bench bench-perf bench-k2u bench-rings bench-xdp bench-sockfilter bench-upstream; do \
		recipe=$$($(MAKE) -s -n $$t RESULTS=$$scratch) && printf '%s\n' "$$recipe" | sh -n || \
		{ echo "lint: make $$t: its recipe is not valid shell"; rm -rf $$scratch; exit 1; }; done; rm -rf $$scratch
	@# The reader builds wherever cilium/ebpf does; the rigs are Linux only.
	for os in darwin windows freebsd; do GOOS=$$os $(GO) build ./... || exit 1; done
	GOOS=windows $(GO) vet ./ringbuf/ ./perf/
	@# 32-bit Linux: the kernel's positions are 32-bit words there (internal/ulong).
	for arch in 386 arm; do GOARCH=$$arch $(GO) build ./... && GOARCH=$$arch $(GO) vet ./... || exit 1; done
	@# The CI workflow (.github/workflows), which cannot run here: actionlint,
	@# built from internal/tools as staticcheck is.
	$(GO) -C internal/tools build -o $(TOOLBIN)/ github.com/rhysd/actionlint/cmd/actionlint
	$(TOOLBIN)/actionlint

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

# bench: the ringbuf reader benchmark, every mode and both touch variants,
# the end-to-end benchmark, and the writer's (BenchmarkWrite, not pinned:
# its two-goroutine mode needs two CPUs; about 30 s by default). By
# default 4 sizes (16,128,1024,4096), 64 MiB rings, COUNT=6 runs of
# BENCHTIME=50ms: about 3 minutes of benchmarks, under 5 from a fresh
# clone. The runs go in COUNT rounds, every benchmark once a round, so
# that a slow spell of a shared host falls on every mode alike, not on
# one mode's runs in a row. FULL=1 is the reference run
# docs/bench-ringbuf.md's tables come from: the 8 default sizes
# (16..4096) and 10 runs, about 11 minutes. SIZES (a list, or sweep for 80..2048 by 16), RING (bytes), COUNT
# and BENCHTIME override either; OUT names the results file. Prints the
# plan, progress, then the summary; the full benchstat tables go to
# <results>-tables.txt, plots beside them.
RB_OUT = $(or $(OUT),$(RESULTS)/ringbuf-$(STAMP).txt)
RB_QUICK_SIZES := 16,128,1024,4096
RB_SIZES = $(or $(SIZES),$(if $(FULL),,$(RB_QUICK_SIZES)))
RB_RING = $(or $(RING),67108864)
RB_BENCHES = BenchmarkRead$$|BenchmarkEndToEnd$$
bench: tools deps-bench $(BENCHMOD)
	@mkdir -p $(dir $(RB_OUT))
	@echo "make bench: $(if $(TASKSET),pinned to CPU $(PIN) (PIN= to change),not pinned$(if $(PIN), (taskset not found)))"
	@echo "make bench: $(if $(LIBBPF),with,WITHOUT) the libbpf peer$(if $(LIBBPF),, (mode=libbpf skips: pkg-config finds no libbpf or no C compiler))"
	@echo "make bench: $(if $(FULL),the full reference run,the quick run (FULL=1 for the reference run docs/bench-ringbuf.md's tables come from))"
	@$(if $(RB_SIZES),RINGBUF_BENCH_SIZES=$(RB_SIZES)) RINGBUF_BENCH_RING=$(RB_RING) $(BENCHRUN) -title "make bench" -rounds $(COUNT) -out $(RB_OUT) -- \
		$(TASKSET) $(GO) test -vet=off $(LIBBPF) -run '^$$' -bench '$(RB_BENCHES)' -benchmem -benchtime $(BENCHTIME) -count 1 -timeout 0 ./ringbuf/ \
		--- $(GO) test -vet=off $(LIBBPF) -run '^$$' -bench 'BenchmarkWrite$$' -benchmem -benchtime $(BENCHTIME) -count 1 -timeout 0 ./ringbuf/
	@$(MAKE) --no-print-directory bench-tables IN=$(RB_OUT) > $(basename $(RB_OUT))-tables.txt
	@$(MAKE) --no-print-directory -s bench-plot IN=$(RB_OUT)
	@$(SUMMARY) -kind ringbuf -tables $(basename $(RB_OUT))-tables.txt $(RB_OUT)

# bench-tables: make bench's benchstat tables from a saved run (IN=file).
bench-tables: tools
	@echo; echo "== drain rate of every mode against the first (upstream), one table per touch variant (results: $(IN))"
	$(BENCHSTAT) -filter '.name:Read .unit:Mrec/s' -table .config,/touch -row /size -col /mode $(IN)
	@echo; echo "== records against copy"
	$(BENCHSTAT) -filter '.name:Read .unit:Mrec/s' -table .config,/touch -row /size -col '/mode@(copy records)' $(IN)
	@echo; echo "== records against cilium/ebpf main's lease technique, the floor and libbpf"
	$(BENCHSTAT) -filter '.name:Read .unit:Mrec/s' -table .config,/touch -row /size -col '/mode@(lease records)' $(IN)
	$(BENCHSTAT) -filter '.name:Read .unit:Mrec/s' -table .config,/touch -row /size -col '/mode@(libbpf records)' $(IN)
	@echo; echo "== end to end: Records with wakeups against NO_WAKEUP and polling"
	$(BENCHSTAT) -filter '.name:EndToEnd .unit:(Mrec/s OR full-%)' -row /size -col '/wake@(wakeup poll)' $(IN)
	@echo; echo "== user ring buffer writer: Reserve/Submit, Write and ReserveBatch against libbpf, two goroutines against one"
	$(BENCHSTAT) -filter '.name:Write .unit:Mrec/s' -row /size -col '/mode@(libbpf reserve write batch)' $(IN)
	$(BENCHSTAT) -filter '.name:Write .unit:Mrec/s' -row /size -col '/mode@(reserve reserve-x2)' $(IN)
	$(BENCHSTAT) -filter '.name:Write .unit:Mrec/s' -row /size -col '/mode@(batch batch-x2)' $(IN)
	@echo; echo "== the writer's own cost, the kernel's drain left out (write-ns/rec: lower is better)"
	$(BENCHSTAT) -filter '.name:Write .unit:write-ns/rec' -row /size -col '/mode@(libbpf reserve write batch)' $(IN)
	$(BENCHSTAT) -filter '.name:Write .unit:write-ns/rec' -row /size -col '/mode@(reserve reserve-x2)' $(IN)
	$(BENCHSTAT) -filter '.name:Write .unit:write-ns/rec' -row /size -col '/mode@(batch batch-x2)' $(IN)
	@echo; echo "== allocations (-benchmem); benchstat's tables of them would be all zero"
	@awk '/^Benchmark/ { for (i = 3; i < NF; i++) if ($$(i+1) == "allocs/op") { n++; if ($$i != 0) { bad++; print "allocates:", $$0 } } } \
		END { if (bad) exit 1; print n " results, 0 allocs/op in every one" }' $(IN)

# bench-plot: drain rate against event size, one line per mode, a plot per
# touch variant.
bench-plot: tools
	$(PLOT) -kind line -x /size -y Mrec/s -series /mode -logx -logy -filter '.name:Read /touch:head' \
		-xlabel 'event size (B)' -ylabel 'records drained (millions/s)' -legend 'reader' \
		-title 'ring buffer drain rate, consumer reads 8 bytes of each record (touch=head)' -out $(basename $(IN))-head $(IN)
	$(PLOT) -kind line -x /size -y Mrec/s -series /mode -logx -logy -filter '.name:Read /touch:all' \
		-xlabel 'event size (B)' -ylabel 'records drained (millions/s)' -legend 'reader' \
		-title 'ring buffer drain rate, consumer reads every byte (touch=all)' -out $(basename $(IN))-all $(IN)
	@# A results file without the writer's benchmark (a saved read run) has no write plot.
	if grep -q '^BenchmarkWrite' $(IN); then $(PLOT) -kind line -x /size -y Mrec/s -series /mode -logx -filter '.name:Write' \
		-xlabel 'record size (B)' -ylabel 'records written and drained (millions/s)' -legend 'writer' \
		-title 'user ring buffer: records written, then drained by a BPF program' -out $(basename $(IN))-write $(IN); fi

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
		-count $(COUNT) -benchtime $(BENCHTIME) $(if $(SIZES),-sizes "$(SIZES)") $(if $(RING),-ring $(RING)) \
		$(if $(TASKSET),-pin "$(TASKSET)") -out "$(UP_OUT)"
	@$(SUMMARY) -kind upstream -tables "$(UP_OUT)/summary.txt" "$(UP_OUT)"

# bench-upstream-tables, bench-upstream-plots: bench-upstream's tables and
# plots from a saved run (IN=its results directory).
bench-upstream-tables: tools
	@$(UPSTREAMBENCH) -tables "$(IN)"
bench-upstream-plots: tools
	@$(UPSTREAMBENCH) -plots "$(IN)"

# bench-perf: the perf event array drain benchmark (perf/bench_test.go):
# cilium/ebpf's perf ReadInto against ours and our Records, sizes 16..4096
# (PERF_SIZES), both touches, every reader with a watermark of half its
# 16 MiB buffer (PERF_BUFFER). COUNT rounds of one run of every benchmark
# of PERF_BENCHTIME (100ms), as make bench runs, so that a drift of a
# shared host falls on every mode alike; pinned like make bench. About
# COUNT minutes on a 2-vCPU guest. Plan, progress, tables to
# <results>-tables.txt, plots beside them, then the summary.
PERF_OUT = $(or $(OUT),$(RESULTS)/perf-$(STAMP).txt)
PERF_MODES = /mode@(upstream copy records)
.PHONY: bench-perf bench-perf-tables bench-perf-plots
bench-perf: tools $(BENCHMOD)
	@mkdir -p $(dir $(PERF_OUT))
	@echo "make bench-perf: $(if $(TASKSET),pinned to CPU $(PIN) (PIN= to change),not pinned$(if $(PIN), (taskset not found)))"
	@$(if $(PERF_SIZES),PERF_BENCH_SIZES=$(PERF_SIZES)) $(if $(PERF_BUFFER),PERF_BENCH_BUFFER=$(PERF_BUFFER)) \
	$(BENCHRUN) -title "make bench-perf" -rounds $(COUNT) -out $(PERF_OUT) -- \
		$(TASKSET) $(GO) test -vet=off -run '^$$' -bench 'BenchmarkRead$$' -benchmem -benchtime $(or $(PERF_BENCHTIME),100ms) -count 1 -timeout 0 ./perf/
	@$(MAKE) --no-print-directory bench-perf-tables IN=$(PERF_OUT) > $(basename $(PERF_OUT))-tables.txt
	@$(MAKE) --no-print-directory -s bench-perf-plots IN=$(PERF_OUT)
	@$(SUMMARY) -kind perf -tables $(basename $(PERF_OUT))-tables.txt $(PERF_OUT)

# bench-perf-tables: bench-perf's benchstat tables from a saved run (IN=file).
bench-perf-tables: tools
	@echo; echo "== perf drain rate of every mode against cilium/ebpf's perf ReadInto, one table per touch variant (results: $(IN))"
	$(BENCHSTAT) -filter '.name:Read .unit:Mrec/s' -table /touch -row /size -col '$(PERF_MODES)' $(IN)
	@echo; echo "== records against our ReadInto"
	$(BENCHSTAT) -filter '.name:Read .unit:Mrec/s' -table /touch -row /size -col '/mode@(copy records)' $(IN)

# bench-perf-plots: drain rate against event size, one line per mode.
bench-perf-plots: tools
	$(PLOT) -kind line -x /size -y Mrec/s -series '$(PERF_MODES)' -logx -logy -filter '.name:Read /touch:head' \
		-xlabel 'event size (B)' -ylabel 'records drained (millions/s)' -legend 'reader' \
		-title 'perf buffer drain rate, consumer reads 8 bytes of each record (touch=head)' -out $(basename $(IN))-head $(IN)
	$(PLOT) -kind line -x /size -y Mrec/s -series '$(PERF_MODES)' -logx -logy -filter '.name:Read /touch:all' \
		-xlabel 'event size (B)' -ylabel 'records drained (millions/s)' -legend 'reader' \
		-title 'perf buffer drain rate, consumer reads every byte (touch=all)' -out $(basename $(IN))-all $(IN)

# bench-k2u: kernel-to-user transports, perf event array, ring buffer and
# queue map. The producer's cost per event (net of an empty program) over
# K2U_SIZES, then end to end with a pinned producer and consumer
# (K2U_DURATION, K2U_RATES and the rest in bench/k2u_env_test.go).
# K2U_COUNT rounds, every row once a round, 10 by default: about 25
# minutes. Plan, progress, tables to <results>-tables.txt, plots, then
# the summary.
K2U_OUT = $(or $(OUT),$(RESULTS)/k2u-$(STAMP).txt)
# The producer table's columns: the base first (reserve + submit without
# a wakeup), then every other helper and flag at the same size.
K2U_PRODUCERS = /helper@(ringbuf_reserve ringbuf_output perf_event_output map_push_elem),/flags@(no_wakeup 0 force_wakeup current_cpu_no_reader current_cpu_watermark current_cpu)
# The end-to-end table's columns: upstream's ring buffer reader is the
# base every row has; perf and queue readers each stand for their transport.
K2U_READERS = /reader@(upstream-readinto records readinto perf-readinto perf-records perf-readinto-wm perf-records-wm lookup-delete batch-lookup-delete)
# The perf tables: cilium/ebpf's perf reader against our Records, waking
# on every event, then both with the same watermark.
K2U_PERF_EACH = /reader@(perf-readinto perf-records)
K2U_PERF_WM = /reader@(perf-readinto-wm perf-records-wm)
K2U_PERF_READERS = /reader@(perf-readinto perf-records perf-readinto-wm perf-records-wm)
bench-k2u: tools $(BENCHMOD)
	@mkdir -p $(dir $(K2U_OUT))
	@$(BENCHRUN) -title "make bench-k2u" -rounds $(or $(K2U_COUNT),10) -out $(K2U_OUT) -- \
		$(GO) test -run '^$$' -bench 'BenchmarkProducer$$|BenchmarkK2U$$' -count 1 -timeout 0 ./bench/
	@$(MAKE) --no-print-directory bench-k2u-tables IN=$(K2U_OUT) > $(basename $(K2U_OUT))-tables.txt
	@$(MAKE) --no-print-directory -s bench-k2u-plots IN=$(K2U_OUT)
	@$(SUMMARY) -kind k2u -tables $(basename $(K2U_OUT))-tables.txt $(K2U_OUT)

# bench-k2u-tables: bench-k2u's benchstat tables from a saved run (IN=file).
bench-k2u-tables: tools
	@echo; echo "== producer: ns per event net of an empty program, and ms per 9,999,999 runs (the published unit), against reserve + submit with BPF_RB_NO_WAKEUP at the same size"
	$(BENCHSTAT) -filter '.name:Producer .unit:(net-ns/op OR ms/9999999runs)' -row /size -col '$(K2U_PRODUCERS)' $(IN)
	@echo; echo "== end to end, rows by event size (B) and producer rate (events/s), against upstream's ring buffer ReadInto"
	$(BENCHSTAT) -filter '.name:K2U .unit:(events/s OR lost-% OR cons-ms/Mevent)' -row /size,/rate -col '$(K2U_READERS)' $(IN)
	@echo; echo "== end to end, perf only: cilium/ebpf's perf reader against our Records, per-event wakeups and a watermark of a quarter buffer"
	$(BENCHSTAT) -filter '.name:K2U /transport:perf .unit:(events/s OR lost-% OR cons-ms/Mevent)' -row /size,/rate -col '$(K2U_PERF_EACH)' $(IN)
	$(BENCHSTAT) -filter '.name:K2U /transport:perf .unit:(events/s OR lost-% OR cons-ms/Mevent)' -row /size,/rate -col '$(K2U_PERF_WM)' $(IN)

# bench-k2u-plots: bench-k2u's plots from a saved run (IN=file).
bench-k2u-plots: tools
	$(PLOT) -kind bar -x /helper -y net-ns/op -series /flags -logy -filter '.name:Producer /size:80' \
		-xlabel 'BPF helper' -ylabel 'cost per event, net of an empty program (ns)' -legend 'flags' \
		-title 'producer cost per 80-byte event' -out $(basename $(IN))-producer $(IN)
	$(PLOT) -kind bar -x '$(K2U_READERS)' -y events/s -series /size -logy -filter '.name:K2U /rate:max' \
		-xlabel 'reader' -ylabel 'events delivered (per s)' -legend 'event size (B)' \
		-title 'events delivered to user space, producer flat out' -out $(basename $(IN))-e2e $(IN)
	$(PLOT) -kind bar -x '$(K2U_READERS)' -y cons-ms/Mevent -series /size -logy -filter '.name:K2U /rate:1000000' \
		-xlabel 'reader' -ylabel 'consumer CPU per million events (ms)' -legend 'event size (B)' \
		-title 'consumer CPU per million events, 1M events/s offered' -out $(basename $(IN))-cpu $(IN)
	$(PLOT) -kind bar -x '$(K2U_PERF_READERS)' -y cons-ms/Mevent -series /size -logy -filter '.name:K2U /transport:perf /rate:1000000' \
		-xlabel 'reader' -ylabel 'consumer CPU per million events (ms)' -legend 'event size (B)' \
		-title 'perf: consumer CPU per million events, 1M events/s offered' -out $(basename $(IN))-perf-cpu $(IN)

# bench-rings: ring buffer producers on every CPU at once, into one ring
# they share or a ring per CPU (RINGS_SIZES, RINGS_PRODUCERS, RINGS_RING in
# bench/rings_env_test.go), then MultiReader against Reader
# (BenchmarkMultiRecords, runs of BENCHTIME). Both run in RINGS_COUNT
# rounds, every row of both once a round: one count for the target, so
# both families spread over the whole time; RINGS_COUNT defaults to
# COUNT, 6 (about 7 minutes), or 10 with FULL=1 as
# testdata/rings/multi.txt. Plan, progress, benchstat tables shared
# against per-CPU and one producer against two to <results>-tables.txt,
# then the lock-contention projection to 8, 32 and 128 CPUs
# (internal/ringmodel) and plots of both at RINGS_PLOT_SIZE bytes with
# NO_WAKEUP, and the summary.
RINGS_OUT = $(or $(OUT),$(RESULTS)/rings-$(STAMP).txt)
RINGS_PLOT_SIZE ?= 128
bench-rings: tools $(BENCHMOD)
	@mkdir -p $(dir $(RINGS_OUT))
	@$(BENCHRUN) -title "make bench-rings" -rounds $(or $(RINGS_COUNT),$(COUNT)) -out $(RINGS_OUT) -- \
		$(GO) test -run '^$$' -bench 'BenchmarkRings$$' -benchtime $(or $(RINGS_BENCHTIME),1s) -count 1 -timeout 0 ./bench/ \
		--- $(TASKSET) $(GO) test -run '^$$' -bench 'BenchmarkMultiRecords$$' -benchmem -benchtime $(BENCHTIME) -count 1 -timeout 0 ./ringbuf/
	@$(MAKE) --no-print-directory bench-rings-tables IN=$(RINGS_OUT) > $(basename $(RINGS_OUT))-tables.txt
	@$(MAKE) --no-print-directory -s bench-rings-plots IN=$(RINGS_OUT)
	@$(SUMMARY) -kind rings -tables $(basename $(RINGS_OUT))-tables.txt $(RINGS_OUT)

# bench-rings-tables: bench-rings' benchstat tables from a saved run (IN=file).
bench-rings-tables: tools
	@echo; echo "== per-CPU rings against a shared ring; ns/event is a producer thread's CPU time per event (results: $(IN))"
	$(BENCHSTAT) -filter '.name:Rings .unit:(ns/event OR Mevents/s)' -row /producers,/size,/flags -col '/layout@(shared percpu)' $(IN)
	@echo; echo "== loss: the rings are drained before they fill, so any loss is listed here"
	@awk '/^BenchmarkRings/ { for (i = 3; i < NF; i++) if ($$(i+1) == "lost-%") { n++; if ($$i != 0) { lost++; print "lost:", $$0 } } } \
		END { print n " results, " (lost + 0) " with a loss" }' $(IN)
	@echo; echo "== the shared ring: two producers contending against one alone"
	$(BENCHSTAT) -filter '.name:Rings /layout:shared .unit:(ns/event OR Mevents/s)' -row /size,/flags -col /producers $(IN)
	@echo; echo "== reading: MultiReader.Records against Reader.Records over one ring, then over 1, 2 and 4 rings of the same total size"
	$(BENCHSTAT) -filter '.name:MultiRecords /rings:1 .unit:(ns/op OR Mrec/s)' -row /size -col '/reader@(Reader MultiReader)' $(IN)
	$(BENCHSTAT) -filter '.name:MultiRecords /reader:MultiReader .unit:(ns/op OR Mrec/s)' -row /size -col '/rings@(1 2 4)' $(IN)

# bench-rings-plots: the measured points and the projection, from a saved
# run (IN=file); the projection is written beside it, -projection.txt.
RINGS_PROJ = $(basename $(IN))-projection.txt
bench-rings-plots: tools
	$(TOOLBIN)/ringproject -producers 1,2,8,32,128 $(IN) | tee $(RINGS_PROJ)
	$(PLOT) -kind line -x /producers -y ns/event -series /layout -logx -logy -filter '.name:Rings /size:$(RINGS_PLOT_SIZE) /flags:no_wakeup' \
		-xlabel 'producer CPUs (count)' -ylabel 'CPU time per event, per producer (ns)' -legend 'layout' \
		-title 'producer CPU time per $(RINGS_PLOT_SIZE)-byte event, NO_WAKEUP (-projection: the model)' \
		-out $(basename $(IN))-ns $(IN) $(RINGS_PROJ)
	$(PLOT) -kind line -x /producers -y Mevents/s -series /layout -logx -logy -filter '.name:Rings /size:$(RINGS_PLOT_SIZE) /flags:no_wakeup' \
		-xlabel 'producer CPUs (count)' -ylabel 'events placed, all producers (M/CPU-s)' -legend 'layout' \
		-title 'events placed, $(RINGS_PLOT_SIZE)-byte events, NO_WAKEUP (-projection: the model)' \
		-out $(basename $(IN))-rate $(IN) $(RINGS_PROJ)

# bench-sockfilter: a UDP server on [::1] against one good client and bad
# clients sending empty datagrams, with and without a socket filter that
# drops those in the kernel (SOCKF_BAD, SOCKF_PAYLOADS, SOCKF_DURATION in
# bench/sockfilter_env_test.go). Each of the 48 rows runs 2 s, so
# SOCKF_COUNT defaults to 6 rounds, every row once a round (about 10
# minutes), the fewest runs for which benchstat gives a confidence
# interval; the tables show that spread. Plan, progress, tables to
# <results>-tables.txt, plots, then the summary.
SOCKF_OUT = $(or $(OUT),$(RESULTS)/sockfilter-$(STAMP).txt)
bench-sockfilter: tools $(BENCHMOD)
	@mkdir -p $(dir $(SOCKF_OUT))
	@$(BENCHRUN) -title "make bench-sockfilter" -rounds $(or $(SOCKF_COUNT),6) -out $(SOCKF_OUT) -- \
		$(GO) test -run '^$$' -bench 'BenchmarkSocketFilter' -benchtime 1x -count 1 -timeout 0 ./bench/
	@$(MAKE) --no-print-directory bench-sockfilter-tables IN=$(SOCKF_OUT) > $(basename $(SOCKF_OUT))-tables.txt
	@$(MAKE) --no-print-directory -s bench-sockfilter-plots IN=$(SOCKF_OUT)
	@$(SUMMARY) -kind sockfilter -tables $(basename $(SOCKF_OUT))-tables.txt $(SOCKF_OUT)

# bench-sockfilter-tables: the filter on against off, from a saved run (IN=file).
bench-sockfilter-tables: tools
	@echo; echo "== filter on against off; one table per receive batch (recv), rows by good payload (B) and bad clients"
	$(BENCHSTAT) -filter '.name:SocketFilter .unit:(good-B/s OR good-lost-% OR reads/good OR ovfl-drops/s)' -table .config,/recv -row /payload,/bad -col '/filter@(off on)' $(IN)

# bench-sockfilter-plots: useful throughput by bad clients, from a saved run (IN=file).
bench-sockfilter-plots: tools
	$(PLOT) -kind bar -x /bad -y good-B/s -series '/filter@(off on)' -filter '.name:SocketFilter /payload:1 /recv:1' \
		-xlabel 'bad clients per good one' -ylabel 'useful throughput (B/s)' -legend 'socket filter' \
		-title 'useful bytes/s, 1-byte good datagrams, server reading one per call' -out $(basename $(IN))-recv1 $(IN)
	$(PLOT) -kind bar -x /bad -y good-B/s -series '/filter@(off on)' -filter '.name:SocketFilter /payload:1 /recv:64' \
		-xlabel 'bad clients per good one' -ylabel 'useful throughput (B/s)' -legend 'socket filter' \
		-title 'useful bytes/s, 1-byte good datagrams, server reading up to 64 per call' -out $(basename $(IN))-recv64 $(IN)

# bench-xdp: XDP packets to user space under real veth traffic, one row per
# consumer strategy (XDP_PPS, XDP_DURATION and the rest in bench/xdp_env_test.go).
# Each of the 22 rows (14 strategies, 8 of the loss sweep) runs 5 s, so
# XDP_COUNT defaults to 6 rounds, every row once a round (about 11
# minutes), the fewest runs for which benchstat gives a confidence
# interval; its tables show that spread, xdptable the medians. Plan,
# progress, tables to <results>-tables.txt, plots, then the summary.
XDP_OUT = $(or $(OUT),$(RESULTS)/xdp-$(STAMP).txt)
bench-xdp: tools $(BENCHMOD)
	@mkdir -p $(dir $(XDP_OUT))
	@$(BENCHRUN) -title "make bench-xdp" -rounds $(or $(XDP_COUNT),6) -out $(XDP_OUT) -- \
		$(GO) test -run '^$$' -bench 'BenchmarkXDP' -benchtime 1x -count 1 -timeout 0 ./bench/
	@$(MAKE) --no-print-directory bench-xdp-tables IN=$(XDP_OUT) > $(basename $(XDP_OUT))-tables.txt
	@$(MAKE) --no-print-directory -s bench-xdp-plots IN=$(XDP_OUT)
	@$(SUMMARY) -kind xdp -tables $(basename $(XDP_OUT))-tables.txt $(XDP_OUT)

# bench-xdp-tables: the study's table, then benchstat on the pairs that
# compare like with like, from a saved run (IN=file).
# Neither ring buffer reader loses packets at 80,000/s, so lost-% would
# be a table of zeros here; delivered-pps shows a loss if there is one.
XDP_UNITS = .unit:(delivered-pps OR p99-us OR cons-ms/s OR cpu-ms/Mpkt)
bench-xdp-tables: tools
	$(TOOLBIN)/xdptable -in $(IN)
	@echo; echo "== our Records against upstream's ReadInto, both on epoll"
	$(BENCHSTAT) -filter '.name:XDP $(XDP_UNITS)' -row .name -col '/strategy@(rb-epoll-upstream rb-epoll)' $(IN)
	@echo; echo "== our Records against upstream's ReadInto, both sleeping 50 us when the ring is empty"
	$(BENCHSTAT) -filter '.name:XDP $(XDP_UNITS)' -row .name -col '/strategy@(rb-sleep-50us-upstream rb-sleep-50us)' $(IN)
	@echo; echo "== perf + epoll: our perf Records against cilium/ebpf's perf ReadInto, the same wake-ups"
	$(BENCHSTAT) -filter '.name:XDP $(XDP_UNITS)' -row .name -col '/strategy@(perf-epoll perf-epoll-records)' $(IN)
	@echo; echo "== loss sweep: ring buffer against perf, rows by offered packets/s"
	$(BENCHSTAT) -filter '.name:XDPLoss .unit:(delivered-pps OR e2e-lost-% OR lost-% OR p99-us OR cpu-ms/Mpkt)' -row /pps -col '/strategy@(perf-epoll rb-epoll)' $(IN)

# bench-xdp-plots: latency against consumer CPU, from a saved run (IN=file).
bench-xdp-plots: tools
	$(PLOT) -kind scatter -x cons-ms/s -y p99-us -series /strategy -logx -logy -filter '.name:XDP -/strategy:baseline' \
		-xlabel 'consumer CPU (ms per s)' -ylabel 'p99 latency, capture to consumer (µs)' -legend 'consumer strategy' \
		-title 'XDP to user space: p99 latency against consumer CPU' -out $(basename $(IN)) $(IN)
