#!/usr/bin/env bash
# Session 4, run 3: the limits beside the unmet targets (probes with no
# hashing), and LI against KT128 on the GPU in one run.
set -u
m=scripts/measure.py; bin=.devperf
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in $(seq 32); do cat /tmp/one-gib.bin; done >/tmp/big-32.bin
head -c $((8 << 30)) /tmp/big-32.bin >/tmp/big-8.bin
cat /tmp/big-8.bin >/dev/null
echo "## staging ceiling (no kernels), 8 GiB"
TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REGISTERED_ONLY=1 timeout 120 $bin/bench-gpu_host --bench 2>&1 | grep -v "^$" | head -20
echo "## end to end, LI and KT128, same run"
TREEHASH_BENCH_END_TO_END_ONLY=1 TREEHASH_BENCH_FILE=/tmp/big-8.bin TREEHASH_BENCH_REPS=5 timeout 240 $bin/bench-gpu --bench 2>&1 | grep -v "^$"
echo "## KT128 --backend gpu by chunk bytes, 8 GiB"
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for c in 32 64 128; do $m --repeat 5 --label "kt128 --backend gpu --chunk-bytes ${c}MiB" -- $bin/treehash -a kt128 --backend gpu --chunk-bytes $((c << 20)) /tmp/big-8.bin; done
echo "## reading with no hashing: 16 dd processes, 1 MiB reads, each 1/16 of the file"
probe() { # file gib
  local per=$(( $2 * 1024 / 16 )) s e
  s=$(date +%s%N)
  for i in $(seq 0 15); do dd if=$1 of=/dev/null bs=1M skip=$((i * per)) count=$per status=none & done; wait
  e=$(date +%s%N); echo "$(basename $1): $(( (e - s) / 1000000 )) ms"
}
for r in 1 2 3; do probe /tmp/big-8.bin 8; done
cat /tmp/big-32.bin >/dev/null
for r in 1 2 3; do probe /tmp/big-32.bin 32; done
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
$m --repeat 3 --label "kt128 auto, 32 GiB" -- $bin/treehash -a kt128 /tmp/big-32.bin
$m --repeat 3 --label "k12sum, 32 GiB" -- $bin/k12sum /tmp/big-32.bin
$m --repeat 3 --label "b3sum, 32 GiB" -- $bin/b3sum /tmp/big-32.bin
TREEHASH_TRACE=1 $bin/treehash -a kt128 -v --json /tmp/big-32.bin 2>/tmp/auto.trace | head -c 600; echo
grep -E "join|start|gpu0" /tmp/auto.trace | head -8; grep -c "chunks from" /tmp/auto.trace; tail -3 /tmp/auto.trace
