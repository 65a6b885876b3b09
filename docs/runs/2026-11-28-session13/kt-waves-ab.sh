#!/usr/bin/env bash
# Session 13, run 2: tip (86350f1, a GPU-only file walked in 128 MiB
# pieces) against wave (pieces of one wave: 1 GiB for KT128), 7 rounds with
# the order swapped each round, 16 GiB page-cached, --backend gpu; LI H = 8
# as the control (its path is unchanged); then the host's staging ceiling
# (benches/gpu_host.rs, no hashing) and the wave build's KT128 trace summary.
# Carried: .devx/{tip,wave}/treehash, .devx/bench-gpu_host.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-7}
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env2.txt"
[ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
cat $f >/dev/null; cat $f >/dev/null
log=$out/runs2.tsv; echo -e "round\tfn\tdev\tbuild\twall_ms\tleaf_ms\tdigest" >$log
for r in $(seq $rounds); do
 for a in "-a kt128|0,1" "-a kt128|0" "-a parallelhash256|0,1" "-H 8|0,1"; do
   bs="tip wave"; [ $(( r % 2 )) = 0 ] && bs="wave tip"
   for b in $bs; do
     s=$(date +%s%N)
     # shellcheck disable=SC2086
     o=$(.devx/$b/treehash --backend gpu --device ${a#*|} ${a%|*} --timings --no-names $f 2>$out/err.txt)
     e=$(( ($(date +%s%N) - s) / 1000000 ))
     echo -e "$r\t${a%|*}\t${a#*|}\t$b\t$e\t$(grep -m1 'leaf hashing' $out/err.txt | awk '{print $3}')\t${o:0:16}" >>$log
   done
 done
 uptime >>"$out/env2.txt"
done
for a in "-a kt128" "-a parallelhash256"; do
  echo "cpu $a $(.devx/wave/treehash --backend cpu $a --no-names $f | cut -c1-16)" >>"$out/env2.txt"
done
TREEHASH_BENCH_TOGETHER_ONLY=1 TREEHASH_BENCH_FILE=$f timeout 120 .devx/bench-gpu_host >"$out/ceiling2.txt" 2>&1
TREEHASH_TRACE=1 .devx/wave/treehash --backend gpu --device 0,1 -a kt128 --timings --no-names $f 2>&1 |
  grep -v "chunk launch\|chunks from" | tail -14 >"$out/trace2.txt"
python3 - "$log" >"$out/summary2.md" <<'PY'
import sys,statistics,collections
rows=[l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
g=collections.defaultdict(list); dg=collections.defaultdict(set)
for r,fn,d,c,w,leaf,dig in rows:
    g[(fn,d,c)].append((int(w),float(leaf) if leaf else float('nan'))); dg[fn].add(dig)
print("| fn | devices | build | median wall ms | wall runs | median leaf ms | leaf runs |")
print("|---|---|---|---:|---|---:|---|")
for k,v in sorted(g.items()):
    print(f"| {k[0]} | {k[1]} | {k[2]} | {statistics.median(x[0] for x in v):.0f} | {' '.join(str(x[0]) for x in v)} | {statistics.median(x[1] for x in v):.0f} | {' '.join(f'{x[1]:.0f}' for x in v)} |")
print()
for fn,d in dg.items(): print(f"{fn}: digests {sorted(d)}")
PY
cat "$out/summary2.md" "$out/env2.txt" "$out/trace2.txt"; tail -20 "$out/ceiling2.txt"
