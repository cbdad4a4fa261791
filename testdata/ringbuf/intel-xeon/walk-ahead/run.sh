#!/bin/bash
# run.sh OUTDIR ROUNDS SIZES BENCHRE BENCHTIME VARIANT...
out=$1; rounds=$2; sizes=$3; re=$4; bt=$5; shift 5
mkdir -p $out
for r in $(seq $rounds); do
  for v in $(printf '%s\n' "$@" | shuf); do
    RINGBUF_BENCH_RING=67108864 taskset -c 1 /work/exp/bin/rb-$v.test -test.run xxx -test.bench "$re" -test.benchtime $bt -ringbuf.sizes $sizes -test.benchmem >> $out/$v.txt 2>&1
  done
done
