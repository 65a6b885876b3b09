#!/usr/bin/env bash
# Session 13, runs 7 and 8, one GPU: device_digest of 8 GiB for LI H = 8, KT128,
# KT256 and ParallelHash256 (benches/gpu.rs, TREEHASH_BENCH_DEVICE_GIB),
# median of 5 after a warm-up, with the trace of where the standard
# functions' time goes (buffers made, waits for the GPU, the last node);
# and the last node's rate on one core (benches/permutations.rs), the bound.
# Carried: .devx/bench-gpu-*, .devx/bench-permutations-old.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env7.txt"
# BUILDS: the builds in turn (run 8: "old new old new").
k=0
for b in ${BUILDS:-old}; do
  k=$((k + 1))
  TREEHASH_TRACE=1 TREEHASH_BENCH_DEVICE_GIB=8 TREEHASH_BENCH_REPS=5 .devx/bench-gpu-$b --bench >"$out/dd$k-$b.txt" 2>"$out/dd$k-$b-trace.txt"
  {
    echo "== $k: $b"
    grep "^| " "$out/dd$k-$b.txt"
    # KT128's calls come first: its buffers and spans, warm-up and first run.
    grep "device chunks" "$out/dd$k-$b-trace.txt" | head -4
  } | tee -a "$out/device-digest.txt"
  rm -f "$out/dd$k-$b.txt" "$out/dd$k-$b-trace.txt"
done
TREEHASH_BENCH_SECONDS=0.3 .devx/bench-permutations-old --bench >"$out/bound7.txt" 2>&1
grep -A8 "final node" "$out/bound7.txt"
