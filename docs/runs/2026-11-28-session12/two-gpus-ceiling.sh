#!/usr/bin/env bash
# Session 12's third two-GPU run, on the same warm machine: the host's
# ceiling for feeding both GPUs (benches/gpu_host.rs, no hashing), then
# the new build on two GPUs and on one, LI H = 8 and KT128, 5 rounds, so
# that the ceiling and the times come from one run on one host.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-5}
[ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
cat $f >/dev/null; cat $f >/dev/null
{ date -u; uptime; TREEHASH_BENCH_TOGETHER_ONLY=1 TREEHASH_BENCH_FILE=$f timeout 300 .devx/bench-gpu_host 2>&1; } >"$out/ceiling.md"
log=$out/runs3.tsv; echo -e "round\tfn\tdev\tleaf_ms\twall_ms" >$log
for r in $(seq $rounds); do
 for a in "-H 8" "-a kt128"; do for d in 0,1 0; do
   s=$(date +%s%N)
   # shellcheck disable=SC2086
   .devx/new/treehash --backend gpu --device $d $a --timings --no-names $f >/dev/null 2>$out/err.txt
   e=$(( ($(date +%s%N) - s) / 1000000 ))
   echo -e "$r\t$a\t$d\t$(grep -m1 "leaf hashing" $out/err.txt | awk '{print $3}')\t$e" >>$log
 done; done
done
uptime >>"$out/ceiling.md"
cat "$out/ceiling.md"; cat $log
