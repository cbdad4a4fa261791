#!/bin/bash
# usage: multi.sh OUTDIR ROUNDS SIZES name=regex ...   (binary /tmp/mv_<name>.test)
out=$1; rounds=$2; sizes=$3; shift 3
mkdir -p $out
specs=("$@")
n=${#specs[@]}
for r in $(seq 1 $rounds); do
  for k in $(seq 0 $((n-1))); do
    i=$(( (k + r) % n )); spec=${specs[$i]}; name=${spec%%=*}; re=${spec#*=}
    RINGBUF_BENCH_RING=67108864 RINGBUF_BENCH_SIZES=$sizes taskset -c 1 /tmp/mv_$name.test -test.run '^$' -test.bench "$re" -test.benchtime 50ms -test.count 1 >> $out/$name.txt 2>>$out/err.txt
  done
  echo "round $r done $(date +%T)" >> $out/progress
done
