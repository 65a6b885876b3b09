#!/usr/bin/env bash
# Session 5, run 3: the CPU's role tried once GPUs take part (auto), and the
# limits beside issue 23's targets, in one run on one machine.
set -u
m=scripts/measure.py; bin=.devperf
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"; lscpu | grep -E "Model name|^CPU\(s\)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 32); do cat /tmp/one-gib.bin; done >/tmp/big-32.bin
head -c $((8 << 30)) /tmp/big-32.bin >/tmp/big-8.bin
cat /tmp/big-8.bin >/dev/null
echo "## staging ceiling (no kernels), 8 GiB"
TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REGISTERED_ONLY=1 timeout 120 $bin/bench-gpu_host --bench 2>&1 | grep -E "pinned copy|staging pipeline"
echo "## KT128 and LI H = 8 on the GPU, in-process (treehash bench), 8 GiB"
$bin/treehash bench /tmp/big-8.bin -a kt128 --also sha3-256 --heights 8 --backend gpu --repeat 5 2>&1 | grep -E "^\|"
echo "## staging ceiling again"
TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REGISTERED_ONLY=1 timeout 120 $bin/bench-gpu_host --bench 2>&1 | grep -E "pinned copy|staging pipeline"
echo "## KT128 in-process, 8 GiB (benches/gpu.rs)"
TREEHASH_BENCH_KT_ONLY=1 TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REPS=5 timeout 200 $bin/bench-gpu --bench 2>&1 | grep -E "^\||pinned"
echo "## KT128 in-process, 32 GiB (benches/gpu.rs)"
cat /tmp/big-32.bin >/dev/null
TREEHASH_TRACE=1 TREEHASH_BENCH_KT_ONLY=1 TREEHASH_BENCH_FILE=/tmp/big-32.bin TREEHASH_BENCH_REPS=3 timeout 300 $bin/bench-gpu --bench 2>/tmp/kt32.trace | grep -E "^\||pinned"
echo "role decisions:"; grep "CPU role" /tmp/kt32.trace | sed 's/.*CPU role/CPU role/' | sort | uniq -c
echo "## one thread, 1 GiB, three interleaved rounds"
cat /tmp/one-gib.bin >/dev/null
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for r in 1 2 3; do
  $m --repeat 7 --label "k12sum --num-threads 1, 1 GiB" -- $bin/k12sum --num-threads 1 /tmp/one-gib.bin
  $m --repeat 7 --label "treehash -a kt128 --threads 1, 1 GiB" -- $bin/treehash --backend cpu --threads 1 -a kt128 /tmp/one-gib.bin
done
echo "## 32 GiB, whole processes"
cat /tmp/big-32.bin >/dev/null
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for r in 1 2; do
  $m --repeat 3 --label "kt128 auto, 32 GiB" -- $bin/treehash -a kt128 /tmp/big-32.bin
  $m --repeat 3 --label "kt128 --backend gpu, 32 GiB" -- $bin/treehash -a kt128 --backend gpu /tmp/big-32.bin
  $m --repeat 3 --label "k12sum, 32 GiB" -- $bin/k12sum /tmp/big-32.bin
  $m --repeat 3 --label "b3sum, 32 GiB" -- $bin/b3sum /tmp/big-32.bin
done
echo "## reading 32 GiB with no hashing: 16 dd processes, 1 MiB reads"
for r in 1 2 3; do
  s=$(date +%s%N)
  for i in $(seq 0 15); do dd if=/tmp/big-32.bin of=/dev/null bs=1M skip=$((i * 2048)) count=2048 status=none & done; wait
  e=$(date +%s%N); echo "32 GiB: $(( (e - s) / 1000000 )) ms"
done
