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

# bench-xdp: XDP packets to user space under real veth traffic, one row per
# consumer strategy (XDP_PPS, XDP_DURATION and the rest in bench/xdp_env_test.go).
XDP_OUT = $(or $(OUT),$(RESULTS)/xdp-$(STAMP).txt)
bench-xdp:
	@mkdir -p $(dir $(XDP_OUT))
	$(GO) test -run '^$$' -bench 'BenchmarkXDP' -benchtime 1x -count $(or $(XDP_COUNT),3) -timeout 0 ./bench/ | tee $(XDP_OUT)
	$(GO) run ./internal/xdptable -in $(XDP_OUT)
	$(PLOT) -kind scatter -x cons-ms/s -y p99-us -series strategy -filter '.name=XDP' \
		-note "$$(uname -r)" -title "XDP to user space: latency against consumer CPU" -out $(basename $(XDP_OUT)) $(XDP_OUT)
