#!/usr/bin/env bash
# Session 13, run 9, one GPU: the GPU suites of the tree with short device
# spans and kept buffers (0043) and the even split under auto's staging
# role (0042); `--backend gpu` against `--backend cpu` on 1 GiB.
# Carried: .devx/test-*, .devx/new/treehash.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; } >"$out/env9.txt"
for t in gpu gpu_list gpu_device lib; do
  timeout 300 .devx/test-$t --ignored --test-threads=1 >"$out/test9-$t.log" 2>&1; echo "test-$t rc=$?" >>"$out/env9.txt"
  grep -E "^test result" "$out/test9-$t.log" >>"$out/env9.txt"
done
head -c $((1<<30)) /dev/urandom >/tmp/g.bin
for a in "-H 8" "-a kt128" "-a kt256" "-a parallelhash256"; do
  # shellcheck disable=SC2086
  echo "$a gpu $(.devx/new/treehash --backend gpu $a --no-names /tmp/g.bin | cut -c1-16) cpu $(.devx/new/treehash --backend cpu $a --no-names /tmp/g.bin | cut -c1-16)" >>"$out/env9.txt"
done
cat "$out/env9.txt"
