#!/usr/bin/env bash
# Session 5, run 5: KT128 under auto with the join cost floored (0.5 s) and
# twice it to repay (new) against run 3's build (prev: four times the kept
# start-up), at 48, 32 and 16 GiB; --backend gpu in 128 MiB pieces (new
# default) against 32 MiB (--chunk-bytes), in-process.
set -u
m=scripts/measure.py; bin=.devperf
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 48); do cat /tmp/one-gib.bin; done >/tmp/big.bin
rm /tmp/one-gib.bin
for gb in 48 32 16; do
  f=/tmp/big.bin; truncate -s $((gb << 30)) $f; cat $f >/dev/null
  echo "## $gb GiB, whole processes"
  echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
  for r in 1 2; do
    $m --repeat 3 --label "new: kt128 auto, $gb GiB" -- $bin/treehash -a kt128 $f
    $m --repeat 3 --label "prev: kt128 auto, $gb GiB" -- $bin/th-prev -a kt128 $f
    $m --repeat 3 --label "new: kt128 --backend cpu, $gb GiB" -- $bin/treehash -a kt128 --backend cpu $f
    $m --repeat 3 --label "new: kt128 --backend gpu, $gb GiB" -- $bin/treehash -a kt128 --backend gpu $f
    $m --repeat 3 --label "k12sum, $gb GiB" -- $bin/k12sum $f
    $m --repeat 3 --label "b3sum, $gb GiB" -- $bin/b3sum $f
  done
  TREEHASH_TRACE=1 $bin/treehash -a kt128 -v $f 2>/tmp/auto.trace >/dev/null
  grep -E "GPUs asked|joins at|CPU role|no GPU" /tmp/auto.trace | sed 's/^treehash trace: *//' | head -5
  tail -1 /tmp/auto.trace | cut -c1-120
  if [ $gb = 16 ]; then
    echo "## KT128 --backend gpu in-process by piece length, 16 GiB (treehash bench)"
    for r in 1 2; do
      $bin/treehash bench $f -a kt128 --backend gpu --repeat 5 2>&1 | grep -E "^\| gpu" | sed 's/^/128 MiB pieces: /'
      $bin/treehash bench $f -a kt128 --backend gpu --repeat 5 --chunk-bytes $((32 << 20)) 2>&1 | grep -E "^\| gpu" | sed 's/^/32 MiB pieces: /'
    done
  fi
done
echo "digest: $($bin/treehash -a kt128 --no-names /tmp/big.bin) (auto) $($bin/k12sum /tmp/big.bin | cut -d' ' -f1) (k12sum)"
