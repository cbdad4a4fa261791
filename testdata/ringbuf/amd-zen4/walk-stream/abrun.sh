#!/bin/bash
# usage: run.sh OUTDIR ROUNDS SIZES BENCHREGEX
out=$1; rounds=$2; sizes=$3; re=$4
mkdir -p $out
for r in $(seq 1 $rounds); do
  if (( r % 2 )); then order="old new"; else order="new old"; fi
  for v in $order; do
    RINGBUF_BENCH_RING=67108864 RINGBUF_BENCH_SIZES=$sizes taskset -c 1 /tmp/ab$v.test -test.run '^$' -test.bench "$re" -test.benchtime 50ms -test.count 1 -test.benchmem >> $out/$v.txt 2>>$out/err.txt
  done
  echo "round $r done $(date +%T)" >> $out/progress
done
