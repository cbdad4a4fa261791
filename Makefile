# Every command the project needs; README.md names the two that matter:
# `make bench` (the main job) and `make test` (every test).

GO      ?= go
COUNT   ?= 6
# Timed drain per benchmark run; the untimed fills cost about ten times
# as much, so a second of draining means ten of filling.
BENCHTIME ?= 200ms
RESULTS ?= results
STAMP   := $(shell date -u +%Y%m%dT%H%M%SZ)

# Benchmarks that compare CPU time run on one CPU where taskset exists, so
# the scheduler does not move them between runs.
PIN     := $(shell command -v taskset >/dev/null && echo taskset -c 1)
# The libbpf peer of the ringbuf benchmark needs cgo and libbpf-dev.
LIBBPF  := $(shell pkg-config --exists libbpf 2>/dev/null && echo -tags libbpf)
BENCHSTAT = $(GO) tool benchstat
PLOT      = $(GO) run ./internal/benchplot

.PHONY: all test lint bench benchstat bench-plot bench-k2u bench-xdp bench-sockfilter test-vms

all: test

# lint: formatting and vet, the checks CI refuses to land without.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags libbpf ./ringbuf/

# test: every test under the race detector, every benchmark once as a smoke
# test, and the test suite on every kernel of the matrix (about 2 minutes;
# TEST_KERNELS="oldest newest" narrows it).
test: lint
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
bench:
	@mkdir -p $(dir $(RB_OUT))
	$(if $(SIZES),RINGBUF_BENCH_SIZES=$(SIZES)) $(if $(RING),RINGBUF_BENCH_RING=$(RING)) \
	$(PIN) $(GO) test $(LIBBPF) -run '^$$' -bench 'BenchmarkRead$$|BenchmarkEndToEnd$$' -benchmem -benchtime $(BENCHTIME) -count $(COUNT) -timeout 0 ./ringbuf/ | tee $(RB_OUT)
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

# bench-upstream: the drain benchmark (BenchmarkRead's fills, sizes,
# touches and sum checks) against two versions of cilium/ebpf: BASE, a
# version or a checkout (default: the version go.mod pins), and UPSTREAM, a
# checkout (main, a pull request's head). Each side is built in a scratch
# module, so go.mod stays as it is; the modes a side's ringbuf lacks are
# reported absent. Prints benchstat tables base against head per mode and
# every mode side by side at the head, and draws plots; OUT names the
# results directory. COUNT, BENCHTIME, SIZES and RING as for bench.
UP_OUT = $(or $(OUT),$(RESULTS)/upstream-$(STAMP))
.PHONY: bench-upstream
bench-upstream:
	@$(GO) run ./internal/upstreambench/cmd/upstreambench -upstream "$(UPSTREAM)" $(if $(BASE),-base "$(BASE)") \
		-count $(COUNT) -benchtime $(BENCHTIME) $(if $(SIZES),-sizes "$(SIZES)") $(if $(RING),-ring $(RING)) \
		$(if $(PIN),-pin "$(PIN)") -out "$(UP_OUT)"

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
