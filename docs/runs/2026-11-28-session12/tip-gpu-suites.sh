#!/usr/bin/env bash
# Session 12's fifth device run: the GPU suites of the tip on two GPUs
# (carried: .devx/test-gpu*, .devx/test-lib, .devx/new/treehash), and a
# CLI check that two GPUs give the CPU's digest on a 1 GiB file for LI,
# KT128 and ParallelHash256.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; } >"$out/env5.txt"
for t in gpu gpu_list gpu_device lib; do
  timeout 400 .devx/test-$t --ignored --test-threads=1 >"$out/test5-$t.log" 2>&1; echo "test-$t rc=$?" >>"$out/env5.txt"
  tail -2 "$out/test5-$t.log"
done
head -c $((1<<30)) /dev/urandom >/tmp/g1.bin
for a in "-H 8" "-H 10" "-a kt128" "-a parallelhash256"; do
  g=$(.devx/new/treehash --backend gpu --device 0,1 $a --no-names /tmp/g1.bin)
  c=$(.devx/new/treehash --backend cpu $a --no-names /tmp/g1.bin)
  [ "$g" = "$c" ] && echo "same $a ${g:0:16}" || echo "DIFFERENT $a gpu ${g:0:16} cpu ${c:0:16}"
done >>"$out/env5.txt"
cat "$out/env5.txt"
