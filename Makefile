# Every command the project needs; README.md names the two that matter:
# `make bench` (the main job) and `make test` (every test).

GO      ?= go
COUNT   ?= 6
# Timed drain per benchmark run; the untimed fills cost about ten times
# as much, so a second of draining means ten of filling.
BENCHTIME ?= 200ms
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
BENCHSTAT = $(GO) tool benchstat
PLOT      = $(GO) run ./internal/benchplot

.PHONY: all test lint bench benchstat bench-plot bench-k2u bench-xdp bench-sockfilter test-vms deps-test deps-bench

all: test

# deps-test, deps-bench: the Debian packages make test and make bench use
# (gcc, libbpf-dev, pkg-config, qemu-system-x86, cpio, iproute2), installed
# when missing as root, named in one command otherwise (internal/hostdeps).
deps-test:
	@$(GO) run ./internal/hostdeps test
deps-bench:
	@$(GO) run ./internal/hostdeps bench

# lint: formatting and vet, the checks CI refuses to land without; the
# libbpf build is vetted where libbpf-dev and a C compiler are installed.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(if $(LIBBPF),$(GO) vet -tags libbpf ./ringbuf/ ./internal/libbpfdrain/,@echo "lint: go vet -tags libbpf left out: pkg-config finds no libbpf or no C compiler (make deps-test installs them)")

# test: set-up, lint, every test under the race detector, every benchmark
# once as a smoke test, and the test suite on every kernel of the matrix
# (9 minutes from a fresh clone on a busy 2-CPU host, matrix under TCG;
# TEST_KERNELS="oldest newest" narrows it).
test: deps-test
	@$(MAKE) --no-print-directory lint
	$(GO) test -race -count=1 ./...
	RINGBUF_BENCH_RING=16777216 $(GO) test $(LIBBPF) -run '^$$' -bench . -benchtime 100x -count=1 ./...
	$(MAKE) test-vms KERNELS="$(or $(TEST_KERNELS),all)"

# test-vms: the tests and a benchmark smoke inside QEMU on Debian kernels.
# KERNELS narrows the set ("5.10 6.1"); the default is every kernel.
test-vms:
	$(GO) run ./internal/vmtest/cmd/vmtest -kernels "$(KERNELS)"

# bench: the ringbuf reader benchmark, every mode over the default sizes
# (SIZES=sweep for 80..2048 by 16; RING=bytes for the ring, 256 MiB by
# default). OUT names the results file. Prints benchstat tables and plots.
RB_OUT = $(or $(OUT),$(RESULTS)/ringbuf-$(STAMP).txt)
bench: deps-bench
	@mkdir -p $(dir $(RB_OUT))
	@echo "make bench: $(if $(TASKSET),pinned to CPU $(PIN) (PIN= to change),not pinned$(if $(PIN), (taskset not found)))"
	@echo "make bench: $(if $(LIBBPF),with,WITHOUT) the libbpf peer$(if $(LIBBPF),, (mode=libbpf skips: pkg-config finds no libbpf or no C compiler))"
	$(if $(SIZES),RINGBUF_BENCH_SIZES=$(SIZES)) $(if $(RING),RINGBUF_BENCH_RING=$(RING)) \
	$(TASKSET) $(GO) test $(LIBBPF) -run '^$$' -bench 'BenchmarkRead$$|BenchmarkEndToEnd$$' -benchmem -benchtime $(BENCHTIME) -count $(COUNT) -timeout 0 ./ringbuf/ | tee $(RB_OUT)
	@echo; echo "== every mode against upstream (results: $(RB_OUT))"
	$(BENCHSTAT) -col /mode -row /size -filter '/touch:head' $(RB_OUT)
	$(BENCHSTAT) -col /mode -row /size -filter '/touch:all' $(RB_OUT)
	@echo; echo "== records against copy"
	$(BENCHSTAT) -col '/mode@(copy records)' -row /size $(RB_OUT)
	$(MAKE) bench-plot IN=$(RB_OUT)

# bench-plot: throughput against event size, one line per mode and touch.
bench-plot:
	$(PLOT) -kind line -x size -y Mrec/s -series mode -logx -logy -filter touch=head \
		-note "$$(uname -r)" -title "ringbuf drain, touch=head" -out $(basename $(IN))-head $(IN)
	$(PLOT) -kind line -x size -y Mrec/s -series mode -logx -logy -filter touch=all \
		-note "$$(uname -r)" -title "ringbuf drain, touch=all" -out $(basename $(IN))-all $(IN)

# benchstat: compare two saved runs, OLD against NEW.
benchstat:
	@test -n "$(OLD)" -a -n "$(NEW)" || { echo "usage: make benchstat OLD=a.txt NEW=b.txt"; exit 2; }
	$(BENCHSTAT) $(OLD) $(NEW)

# bench-k2u: kernel-to-user transports, perf event array, ring buffer and
# queue map. The producer's cost per event (net of an empty program) over
# K2U_SIZES, then end to end with a pinned producer and consumer
# (K2U_DURATION, K2U_RATES and the rest in bench/k2u_env_test.go).
K2U_OUT = $(or $(OUT),$(RESULTS)/k2u-$(STAMP).txt)
bench-k2u:
	@mkdir -p $(dir $(K2U_OUT))
	$(GO) test -run '^$$' -bench 'BenchmarkProducer$$|BenchmarkK2U$$' -count $(or $(K2U_COUNT),3) -timeout 0 ./bench/ | tee $(K2U_OUT)
	@echo; echo "== producer: ns per event, net of an empty program, and ms per 9,999,999 runs (the published unit)"
	$(BENCHSTAT) -filter '.name:Producer' -col /size -row /helper,/flags -table '' $(K2U_OUT) | grep -v '^$$'
	@echo; echo "== end to end"
	$(BENCHSTAT) -filter '.name:K2U' -col /reader -row /transport,/size,/rate $(K2U_OUT)
	$(PLOT) -kind bar -x helper -y net-ns/op -series flags -filter '.name=Producer,size=80' \
		-note "$$(uname -r)" -title "producer cost per 80-byte event, net of an empty program" -out $(basename $(K2U_OUT))-producer $(K2U_OUT)
	$(PLOT) -kind bar -x reader -y events/s -series size -filter '.name=K2U,rate=max' \
		-note "$$(uname -r)" -title "events delivered to user space, producer flat out" -out $(basename $(K2U_OUT))-e2e $(K2U_OUT)
	$(PLOT) -kind bar -x reader -y cons-ms/Mevent -series size -filter '.name=K2U,rate=1000000' \
		-note "$$(uname -r)" -title "consumer CPU per million events, 1M events/s offered" -out $(basename $(K2U_OUT))-cpu $(K2U_OUT)

# bench-sockfilter: a UDP server on [::1] against one good client and bad
# clients sending empty datagrams, with and without a socket filter that
# drops those in the kernel (SOCKF_BAD, SOCKF_PAYLOADS, SOCKF_DURATION in
# bench/sockfilter_env_test.go).
SOCKF_OUT = $(or $(OUT),$(RESULTS)/sockfilter-$(STAMP).txt)
bench-sockfilter:
	@mkdir -p $(dir $(SOCKF_OUT))
	$(GO) test -run '^$$' -bench 'BenchmarkSocketFilter' -benchtime 1x -count $(or $(SOCKF_COUNT),5) -timeout 0 ./bench/ | tee $(SOCKF_OUT)
	$(BENCHSTAT) -col /filter -row /recv,/payload,/bad -filter '.unit:(good-B/s OR good-lost-% OR reads/good OR ovfl-drops/s)' $(SOCKF_OUT)
	$(PLOT) -kind bar -x bad -y good-B/s -series filter -filter '.name=SocketFilter,payload=1,recv=1' \
		-note "$$(uname -r)" -title "useful bytes/s, 1-byte good datagrams, server reading one per call, by bad clients" -out $(basename $(SOCKF_OUT))-recv1 $(SOCKF_OUT)
	$(PLOT) -kind bar -x bad -y good-B/s -series filter -filter '.name=SocketFilter,payload=1,recv=64' \
		-note "$$(uname -r)" -title "useful bytes/s, 1-byte good datagrams, server reading up to 64 per call, by bad clients" -out $(basename $(SOCKF_OUT))-recv64 $(SOCKF_OUT)

# bench-xdp: XDP packets to user space under real veth traffic, one row per
# consumer strategy (XDP_PPS, XDP_DURATION and the rest in bench/xdp_env_test.go).
XDP_OUT = $(or $(OUT),$(RESULTS)/xdp-$(STAMP).txt)
bench-xdp:
	@mkdir -p $(dir $(XDP_OUT))
	$(GO) test -run '^$$' -bench 'BenchmarkXDP' -benchtime 1x -count $(or $(XDP_COUNT),3) -timeout 0 ./bench/ | tee $(XDP_OUT)
	$(GO) run ./internal/xdptable -in $(XDP_OUT)
	$(PLOT) -kind scatter -x cons-ms/s -y p99-us -series strategy -filter '.name=XDP' \
		-note "$$(uname -r)" -title "XDP to user space: latency against consumer CPU" -out $(basename $(XDP_OUT)) $(XDP_OUT)
