#!/usr/bin/env bash
# Session 4, run 2: KT128 on the GPU after the last node moved off the walk's
# thread; KT128 peers at 1 GiB/8 GiB/32 GiB; Dask 4 x 4 after per-task reads.
set -u
m=scripts/measure.py; bin=.devperf; k=.devkt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"; lscpu | grep -E "Model name|^CPU\(s\)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 32); do cat /tmp/one-gib.bin; done >/tmp/big-32.bin
head -c $((8 << 30)) /tmp/big-32.bin >/tmp/big-8.bin
cat /tmp/big-8.bin /tmp/one-gib.bin >/dev/null
echo "## KT128 GPU in-process (benches/gpu.rs)"
TREEHASH_BENCH_KT_ONLY=1 TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REPS=5 $bin/bench-gpu --bench 2>&1 | grep -v "^$"
echo "## whole processes, 8 GiB and 1 GiB"
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for r in 1 2; do
  $m --repeat 5 --label "base: kt128 --backend gpu, 8 GiB" -- $k/th-base -a kt128 --backend gpu /tmp/big-8.bin
  $m --repeat 5 --label "new: kt128 --backend gpu, 8 GiB" -- $bin/treehash -a kt128 --backend gpu /tmp/big-8.bin
  $m --repeat 5 --label "new: kt128 --backend cpu, 8 GiB" -- $bin/treehash -a kt128 --backend cpu /tmp/big-8.bin
  $m --repeat 5 --label "new: kt128 auto, 8 GiB" -- $bin/treehash -a kt128 /tmp/big-8.bin
  $m --repeat 5 --label "k12sum, 8 GiB" -- $bin/k12sum /tmp/big-8.bin
  $m --repeat 5 --label "b3sum, 8 GiB" -- $bin/b3sum /tmp/big-8.bin
  $m --repeat 7 --label "k12sum --num-threads 1, 1 GiB" -- $bin/k12sum --num-threads 1 /tmp/one-gib.bin
  $m --repeat 7 --label "new: kt128 --threads 1, 1 GiB" -- $bin/treehash --backend cpu --threads 1 -a kt128 /tmp/one-gib.bin
done
echo "digests: $($bin/treehash -a kt128 --no-names --backend gpu /tmp/big-8.bin) (gpu) $($bin/treehash -a kt128 --no-names --backend cpu /tmp/big-8.bin) (cpu) $($bin/k12sum /tmp/big-8.bin | cut -d' ' -f1) (k12sum)"
TREEHASH_TRACE=1 $bin/treehash -a kt128 --backend gpu /tmp/big-8.bin 2>/tmp/kt.trace >/dev/null
awk '/chunk launch/ { n++; for (i = 1; i <= NF; i++) { if ($i == "after") f += $(i+1); if ($i == "staged") s += $(i+2); if ($i == "queued") q += $(i+2) } }
     /last node fed/ { d += $(NF-1); nd++ }
     END { printf "launches %d: slot waits %.1f ms, staging %.1f ms, queueing %.1f ms; last node fed %d times, %.1f ms\n", n, f, s, q, nd, d }' /tmp/kt.trace
grep "chunk launch" /tmp/kt.trace | sed -n '100,104p'; grep -m2 "last node" /tmp/kt.trace; tail -2 /tmp/kt.trace
echo "## 32 GiB"
cat /tmp/big-32.bin > /dev/null
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for b in cpu gpu auto; do $m --repeat 3 --label "kt128 --backend $b, 32 GiB" -- $bin/treehash -a kt128 --backend $b /tmp/big-32.bin; done
$m --repeat 3 --label "base: kt128 auto, 32 GiB" -- $k/th-base -a kt128 /tmp/big-32.bin
$m --repeat 3 --label "k12sum, 32 GiB" -- $bin/k12sum /tmp/big-32.bin
$m --repeat 3 --label "b3sum, 32 GiB" -- $bin/b3sum /tmp/big-32.bin
rm -f /tmp/big-32.bin
echo "## Dask 4 x 4 on 8 GiB"
site=/tmp/treehash-site; rm -rf $site
python3 -m pip install --quiet --no-index --no-deps --target $site $bin/wheels/treehash-*.whl $bin/wheels/dask/*.whl
PYTHONPATH=$site python3 -P python/bench_dask.py /tmp/big-8.bin --cli $bin/treehash --workers 4 --threads 4 --cli-threads 16 --repeat 5 2>&1 | tail -25
