#!/usr/bin/env bash
# Session 13, run 5, same build pair as run 4 (tip 86350f1 against new),
# the rows that run 4 left unclear, 11 rounds with the order swapped each
# round after one warm-up round not kept. Carried: .devx/{tip,new}/treehash.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin e=/tmp/eight.bin gb=16 rounds=${ROUNDS:-11}
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env5.txt"
[ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
[ -f $e ] || head -c $((8<<30)) $f >$e
cat $f $e >/dev/null
log=$out/runs5.tsv; echo -e "round\tfn\tdev\tbuild\twall_ms\tleaf_ms\tdigest" >$log
for r in $(seq 0 $rounds); do
 for a in "-a kt128|cpu|$e" "-a parallelhash256|cpu|$e" "-a kt128|0,1|$f" "-a parallelhash256|0,1|$f"; do
   IFS='|' read -r fa dev file <<<"$a"
   if [ "$dev" = cpu ]; then be="--backend cpu"; else be="--backend gpu --device $dev"; fi
   bs="tip new"; [ $(( r % 2 )) = 0 ] && bs="new tip"
   for b in $bs; do
     s=$(date +%s%N)
     # shellcheck disable=SC2086
     o=$(.devx/$b/treehash $be $fa --timings --no-names $file 2>$out/err.txt)
     ms=$(( ($(date +%s%N) - s) / 1000000 ))
     [ $r = 0 ] && continue
     echo -e "$r\t$fa\t$dev\t$b\t$ms\t$(grep -m1 'leaf hashing' $out/err.txt | awk '{print $3}')\t${o:0:16}" >>$log
   done
 done
done
uptime >>"$out/env5.txt"
python3 - "$log" >"$out/summary5.md" <<'PY'
import sys,statistics,collections
rows=[l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
g=collections.defaultdict(list); dg=collections.defaultdict(set)
for r,fn,d,c,w,leaf,dig in rows:
    g[(fn,d,c)].append((int(w),float(leaf))); dg[(fn,d)].add(dig)
print("| fn | devices | tip leaf ms (median, min) | new leaf ms (median, min) | new / tip (medians) | tip wall | new wall |")
print("|---|---|---:|---:|---:|---:|---:|")
for fn,d in sorted(set((k[0],k[1]) for k in g)):
    t=g[(fn,d,'tip')]; n=g[(fn,d,'new')]
    mt=statistics.median(x[1] for x in t); mn=statistics.median(x[1] for x in n)
    print(f"| {fn} | {d} | {mt:.0f}, {min(x[1] for x in t):.0f} | {mn:.0f}, {min(x[1] for x in n):.0f} | {mn/mt:.3f} | {statistics.median(x[0] for x in t):.0f} | {statistics.median(x[0] for x in n):.0f} |")
print()
for k,d in dg.items(): print(f"{k}: digests {sorted(d)}")
PY
cat "$out/summary5.md" "$out/env5.txt"
