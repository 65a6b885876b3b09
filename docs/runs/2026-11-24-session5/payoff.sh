#!/usr/bin/env bash
# Session 5, run 4: KT128 with GPUs that join at 1.5 start-ups (new) against
# 4 (th-prev, the build of run 3), and --backend gpu in pieces of 128 MiB.
set -u
m=scripts/measure.py; bin=.devperf
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 32); do cat /tmp/one-gib.bin; done >/tmp/big-32.bin
head -c $((16 << 30)) /tmp/big-32.bin >/tmp/big-16.bin
cat /tmp/big-16.bin >/dev/null
echo "## KT128 in-process, 16 GiB (benches/gpu.rs)"
TREEHASH_BENCH_KT_ONLY=1 TREEHASH_BENCH_FILE=/tmp/big-16.bin TREEHASH_BENCH_REPS=5 timeout 200 $bin/bench-gpu --bench 2>&1 | grep -E "^\||pinned"
for gb in 16 32; do
  f=/tmp/big-$gb.bin; cat $f >/dev/null
  echo "## $gb GiB, whole processes"
  echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
  for r in 1 2; do
    $m --repeat 3 --label "new: kt128 auto, $gb GiB" -- $bin/treehash -a kt128 $f
    $m --repeat 3 --label "prev: kt128 auto, $gb GiB" -- $bin/th-prev -a kt128 $f
    $m --repeat 3 --label "new: kt128 --backend cpu, $gb GiB" -- $bin/treehash -a kt128 --backend cpu $f
    $m --repeat 3 --label "new: kt128 --backend gpu, $gb GiB" -- $bin/treehash -a kt128 --backend gpu $f
    $m --repeat 3 --label "prev: kt128 --backend gpu, $gb GiB" -- $bin/th-prev -a kt128 --backend gpu $f
    $m --repeat 3 --label "k12sum, $gb GiB" -- $bin/k12sum $f
    $m --repeat 3 --label "b3sum, $gb GiB" -- $bin/b3sum $f
  done
  TREEHASH_TRACE=1 $bin/treehash -a kt128 -v $f 2>/tmp/auto-$gb.trace >/dev/null
  grep -E "GPUs asked|joins at|CPU role|no GPU" /tmp/auto-$gb.trace | sed 's/^treehash trace: *//' | head -5
  tail -2 /tmp/auto-$gb.trace
done
echo "digests: $($bin/treehash -a kt128 --no-names /tmp/big-32.bin) (auto) $($bin/treehash -a kt128 --no-names --backend cpu /tmp/big-32.bin) (cpu) $($bin/k12sum /tmp/big-32.bin | cut -d' ' -f1) (k12sum)"
