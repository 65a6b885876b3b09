#!/usr/bin/env bash
# Session 5, run 2: traces of KT128 on the CPU and the GPU together (CPU
# tasks capped), 32 GiB in-process, one run each after a warm-up.
set -u
bin=.devperf
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 32); do cat /tmp/one-gib.bin; done >/tmp/big-32.bin
cat /tmp/big-32.bin >/dev/null
for k in ${AT_ONCE:-2 6}; do
  echo "## CPU tasks $k"
  TREEHASH_TRACE=1 TREEHASH_BENCH_KT_CAPPED_ONLY=1 TREEHASH_BENCH_KT_AT_ONCE=$k TREEHASH_BENCH_KT_ONLY=1 \
    TREEHASH_BENCH_FILE=/tmp/big-32.bin TREEHASH_BENCH_REPS=1 timeout 200 $bin/bench-gpu --bench 2>$OUT/trace-$k.log | grep -v "^$" | tail -3
  grep -c "" $OUT/trace-$k.log
  # the last run's rounds: time, gap since the round before, each engine's bytes and ms
  grep "chunks from" $OUT/trace-$k.log | tail -34 | awk '{ t = $3; gsub(":", "", t); line = sprintf("%8.1f +%6.1f", t, t - prev); prev = t;
     for (i = 1; i <= NF; i++) if ($i == "B") line = line sprintf(" %s %.2f GB %s ms", $(i-2), $(i-1) / 1e9, $(i+1)); print line }' | head -40
  grep -E "last node fed" $OUT/trace-$k.log | tail -3
done
