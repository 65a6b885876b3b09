#!/usr/bin/env bash
# Session 12's seventh device run: the four two-GPU tests of tests/gpu.rs
# at b9b11dc (their share assertion folded into one helper). Carried:
# .devx/test-gpu.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; } >"$out/test7-gpu.log"
# shellcheck disable=SC2046
.devx/test-gpu --ignored --test-threads=1 --exact every_gpu_takes_a_share \
  gpus_begun_side_by_side_share_the_work_from_the_first_piece \
  sequential_inputs_on_several_gpus_give_the_reference_digest \
  files_on_several_gpus_give_the_reference_digest --nocapture >>"$out/test7-gpu.log" 2>&1
echo "rc=$?" >>"$out/test7-gpu.log"
tail -12 "$out/test7-gpu.log"
