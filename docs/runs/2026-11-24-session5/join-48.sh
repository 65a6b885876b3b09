#!/usr/bin/env bash
# Session 5, run 6: KT128 of 48 GiB under auto, a start-up of 0.35 s on
# record (a join under load on a warm GPU; TREEHASH_CACHE_DIR), new (joins:
# twice the 0.5 s floor) against prev (run 3's build: four times 0.35 s,
# stays on the CPU).
set -u
m=scripts/measure.py; bin=.devperf
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
export TREEHASH_CACHE_DIR=/tmp/th-cache; mkdir -p $TREEHASH_CACHE_DIR
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 48); do cat /tmp/one-gib.bin; done >/tmp/big.bin
rm /tmp/one-gib.bin; cat /tmp/big.bin >/dev/null
$bin/treehash -a kt128 --backend gpu /tmp/big.bin >/dev/null   # warms the GPU
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for r in 1 2 3; do
  echo 0.350 > $TREEHASH_CACHE_DIR/gpu-startup-seconds
  $m --repeat 3 --label "new: kt128 auto, 48 GiB" -- $bin/treehash -a kt128 /tmp/big.bin
  echo "  (kept after: $(cat $TREEHASH_CACHE_DIR/gpu-startup-seconds))"
  echo 0.350 > $TREEHASH_CACHE_DIR/gpu-startup-seconds
  $m --repeat 3 --label "prev: kt128 auto, 48 GiB" -- $bin/th-prev -a kt128 /tmp/big.bin
  $m --repeat 3 --label "new: kt128 --backend cpu, 48 GiB" -- $bin/treehash -a kt128 --backend cpu /tmp/big.bin
  $m --repeat 3 --label "b3sum, 48 GiB" -- $bin/b3sum /tmp/big.bin
done
echo 0.350 > $TREEHASH_CACHE_DIR/gpu-startup-seconds
TREEHASH_TRACE=1 $bin/treehash -a kt128 -v /tmp/big.bin 2>/tmp/auto.trace
grep -E "GPUs asked|joins at|CPU role|no GPU|start" /tmp/auto.trace | sed 's/^treehash trace: *//' | head -8
tail -1 /tmp/auto.trace | cut -c1-120
