#!/usr/bin/env bash
# Session 12's sixth device run, after the review's mends (8a75fb6): the
# GPU suites on two GPUs (carried: .devx/test-gpu*, .devx/test-lib), the
# CLI's two-GPU digests against the CPU's on 1 GiB, and prev (04b86a8)
# against new (8a75fb6) on 16 GiB, LI H = 8 on two GPUs, 5 rounds with the
# order swapped each round (the walk now tells every engine's share after
# each piece).
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-5}
( head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; cat $f >/dev/null ) &
filer=$!
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; } >"$out/env6.txt"
for t in gpu gpu_list gpu_device lib; do
  timeout 400 .devx/test-$t --ignored --test-threads=1 >"$out/test6-$t.log" 2>&1; echo "test-$t rc=$?" >>"$out/env6.txt"
  tail -2 "$out/test6-$t.log"
done
wait $filer; cat $f >/dev/null
for a in "-H 8" "-H 10" "-a kt128" "-a parallelhash256"; do
  g=$(.devx/new/treehash --backend gpu --device 0,1 $a --no-names /tmp/one.bin)
  c=$(.devx/new/treehash --backend cpu $a --no-names /tmp/one.bin)
  [ "$g" = "$c" ] && echo "same 1 GiB $a ${g:0:16}" || echo "DIFFERENT 1 GiB $a gpu ${g:0:16} cpu ${c:0:16}"
done >>"$out/env6.txt"
echo "cpu 16 GiB -H 8 $(.devx/new/treehash --backend cpu -H 8 --no-names $f | cut -c1-16)" >>"$out/env6.txt"
log=$out/runs6.tsv; echo -e "round\tbuild\twall_ms\tleaf_ms\tdigest" >$log
for r in $(seq $rounds); do
  bs="prev new"; [ $(( r % 2 )) = 0 ] && bs="new prev"
  for b in $bs; do
    s=$(date +%s%N)
    o=$(.devx/$b/treehash --backend gpu --device 0,1 -H 8 --timings --no-names $f 2>$out/err.txt)
    e=$(( ($(date +%s%N) - s) / 1000000 ))
    echo -e "$r\t$b\t$e\t$(grep -m1 "leaf hashing" $out/err.txt | awk '{print $3}')\t${o:0:16}" >>$log
  done
done
TREEHASH_TRACE=1 .devx/new/treehash --backend gpu --device 0,1 -H 8 --timings --no-names $f 2>&1 | grep -v "piece of" >"$out/trace6-new.txt"
cat "$out/env6.txt" $log "$out/trace6-new.txt"
