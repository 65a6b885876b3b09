#!/usr/bin/env bash
# Session 5, run 1: KT128 on the CPU and the GPU together, the CPU's chunk
# tasks capped (TREEHASH_BENCH_KT_AT_ONCE) so that the other workers stage.
set -u
m=scripts/measure.py; bin=.devperf
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"; lscpu | grep -E "Model name|^CPU\(s\)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 32); do cat /tmp/one-gib.bin; done >/tmp/big-32.bin
head -c $((8 << 30)) /tmp/big-32.bin >/tmp/big-8.bin
echo "## staging ceiling (no kernels), 8 GiB"
cat /tmp/big-8.bin >/dev/null
TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REGISTERED_ONLY=1 timeout 120 $bin/bench-gpu_host --bench 2>&1 | grep -v "^$" | head -12
echo "## KT128 in-process, 8 GiB"
TREEHASH_BENCH_KT_AT_ONCE=${AT_ONCE:-4,8,12} TREEHASH_BENCH_KT_ONLY=1 TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REPS=5 timeout 200 $bin/bench-gpu --bench 2>&1 | grep -v "^$"
echo "## KT128 in-process, 32 GiB"
cat /tmp/big-32.bin >/dev/null
TREEHASH_BENCH_KT_AT_ONCE=${AT_ONCE:-4,8,12} TREEHASH_BENCH_KT_ONLY=1 TREEHASH_BENCH_FILE=/tmp/big-32.bin TREEHASH_BENCH_REPS=3 timeout 300 $bin/bench-gpu --bench 2>&1 | grep -v "^$"
echo "## whole processes, 32 GiB"
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
$m --repeat 3 --label "kt128 auto, 32 GiB" -- $bin/treehash -a kt128 /tmp/big-32.bin
$m --repeat 3 --label "kt128 --backend gpu, 32 GiB" -- $bin/treehash -a kt128 --backend gpu /tmp/big-32.bin
$m --repeat 3 --label "b3sum, 32 GiB" -- $bin/b3sum /tmp/big-32.bin
