#!/bin/bash
# usage: run2.sh OUTDIR ROUNDS SIZES BENCHREGEX OLDBIN NEWBIN
out=$1; rounds=$2; sizes=$3; re=$4; ob=$5; nb=$6
mkdir -p $out
for r in $(seq 1 $rounds); do
  if (( r % 2 )); then order="old new"; else order="new old"; fi
  for v in $order; do
    if [ $v = old ]; then b=$ob; else b=$nb; fi
    RINGBUF_BENCH_RING=67108864 RINGBUF_BENCH_SIZES=$sizes taskset -c 1 $b -test.run '^$' -test.bench "$re" -test.benchtime 50ms -test.count 1 -test.benchmem >> $out/$v.txt 2>>$out/err.txt
  done
  echo "round $r done $(date +%T)" >> $out/progress
done
