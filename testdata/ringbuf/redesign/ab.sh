#!/bin/bash
# The before/after run of issue 21's redesign: today's main (d7a733d) and
# the redesign, each a BenchmarkRead test binary built with -tags libbpf
# (go test -tags libbpf -c -o rb-old.test ./ringbuf/ in each checkout),
# 10 rounds, interleaved, the modes both have, every size, both touches.
set -e
for i in $(seq 1 "${N:-10}"); do
  for v in old new; do
    RINGBUF_BENCH_RING=67108864 taskset -c 1 "./rb-$v.test" -test.run '^$' \
      -test.bench 'BenchmarkRead/size=.*/mode=(upstream|copy|peek|records)/' \
      -test.benchtime 50ms -test.count 1 -test.benchmem | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >> "$v.txt"
  done
done
