#!/usr/bin/env bash
# Session 13, run 12, two GPUs: GPUs alone walking a standard function's
# file apart (decision 0044). The four two-GPU tests of the new build, then
# tip (f1299f6, lockstep) against new, 3 rounds with the order swapped,
# 8 GiB page-cached, whole processes; the host's staging ceiling.
# Carried: .devx/{tip,new}/treehash, .devx/test-gpu, .devx/bench-gpu_host.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/eight.bin rounds=${ROUNDS:-3}
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; } >"$out/env12.txt"
( head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in 1 2 3 4 5 6 7 8; do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; cat $f >/dev/null ) &
filer=$!
for name in files_on_several_gpus_give_the_reference_digest every_gpu_takes_a_share \
    gpus_begun_side_by_side_share_the_work_from_the_first_piece sequential_inputs_on_several_gpus_give_the_reference_digest; do
  timeout 150 .devx/test-gpu --ignored --exact $name >"$out/test12.log" 2>&1; echo "$name rc=$?" >>"$out/env12.txt"
done
wait $filer; cat $f >/dev/null
log=$out/runs12.tsv; echo -e "round\tfn\tdev\tbuild\twall_ms\tleaf_ms\tshares\tdigest" >$log
for r in $(seq $rounds); do
 for a in "-a kt128|0,1|tip new" "-a parallelhash256|0,1|tip new" "-a kt128|0|new" "-H 8|0,1|new"; do
   IFS='|' read -r fa dev bs <<<"$a"
   [ $(( r % 2 )) = 0 ] && bs=$(echo $bs | awk '{for(i=NF;i>0;i--) printf "%s ", $i}')
   for b in $bs; do
     s=$(date +%s%N)
     # shellcheck disable=SC2086
     o=$(.devx/$b/treehash --backend gpu --device $dev $fa --timings --no-names $f 2>$out/err.txt)
     ms=$(( ($(date +%s%N) - s) / 1000000 ))
     sh=$(grep -E "^  gpu[0-9]" $out/err.txt | awk '{print $1 ":" $2}' | tr '\n' ' ')
     echo -e "$r\t$fa\t$dev\t$b\t$ms\t$(grep -m1 'leaf hashing' $out/err.txt | awk '{print $3}')\t$sh\t${o:0:16}" >>$log
   done
 done
done
for a in "-a kt128" "-a parallelhash256"; do echo "cpu $a $(.devx/new/treehash --backend cpu $a --no-names $f | cut -c1-16)" >>"$out/env12.txt"; done
TREEHASH_BENCH_TOGETHER_ONLY=1 TREEHASH_BENCH_FILE=$f timeout 100 .devx/bench-gpu_host 2>&1 | sed -n '1,12p' >"$out/ceiling12.txt"
cat "$out/env12.txt"; column -t -s$'\t' $log 2>/dev/null || cat $log; cat "$out/ceiling12.txt"
