#!/usr/bin/env bash
# Session 12's second two-GPU run, on the same warm machine: lock (df8dbe5)
# against new (GPUs walk the file apart) only, 7 rounds with the order
# swapped each round, two GPUs for LI H = 8 and H = 10 (and H = 8 with
# --gpu-copy readers), one GPU for H = 8 as the control; then the new
# build's traces without their per-piece lines.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-7}
[ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
cat $f >/dev/null; cat $f >/dev/null
{ date -u; nproc; uptime; } >"$out/env2.txt"
log=$out/runs2.tsv; echo -e "round\tfn\tdev\tbuild\twall_ms\tleaf_ms\tdigest" >$log
for r in $(seq $rounds); do
 for a in "-H 8|0,1" "-H 10|0,1" "-H 8 --gpu-copy readers|0,1" "-H 8|0"; do
   bs="lock new"; [ $(( r % 2 )) = 0 ] && bs="new lock"
   for b in $bs; do
     s=$(date +%s%N)
     # shellcheck disable=SC2086
     o=$(.devx/$b/treehash --backend gpu --device ${a#*|} ${a%|*} --timings --no-names $f 2>$out/err.txt)
     e=$(( ($(date +%s%N) - s) / 1000000 ))
     leaf=$(grep -m1 "leaf hashing" $out/err.txt | awk '{print $3}')
     echo -e "$r\t${a%|*}\t${a#*|}\t$b\t$e\t$leaf\t${o:0:16}" >>$log
   done
 done
 uptime >>"$out/env2.txt"
done
for b in lock new; do for a in "-H 8" "-H 10"; do
  echo "== $b --backend gpu --device 0,1 $a"
  TREEHASH_TRACE=1 .devx/$b/treehash --backend gpu --device 0,1 $a --timings --no-names $f 2>&1 | grep -vE "piece of"
done; done >"$out/traces2.txt"
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
for fn,s in dg.items(): print(f"\n{fn}: digests {s}")
PY
cat "$out/summary2.md"; cat "$out/env2.txt"; cat "$out/traces2.txt"
