# Every command the project needs; README.md names the two that matter:
# `make bench` (the main job) and `make test` (every test).

GO      ?= go
COUNT   ?= 6
RESULTS ?= results

.PHONY: all test lint bench

all: test

# lint: formatting and vet, the checks CI refuses to land without.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...

# test: every test, under the race detector, then every benchmark once as a smoke test.
test: lint
	$(GO) test -race -count=1 ./...
	$(GO) test -run '^$$' -bench . -benchtime 100x -count=1 ./...
