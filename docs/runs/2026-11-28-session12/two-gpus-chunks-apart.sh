#!/usr/bin/env bash
# Session 12's fourth two-GPU run: the GPU suites of the build in which a
# standard function's chunks are walked apart too (each GPU one range),
# then lock (df8dbe5) against new, 7 rounds with the order swapped each
# round: KT128, ParallelHash256 and LI H = 8 on two GPUs, KT128 on one as
# the control; and the new build's traces. Carried: .devx/{lock,new}/treehash,
# .devx/test-gpu*, .devx/test-lib.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-7}
( [ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }; cat $f >/dev/null; cat $f >/dev/null ) &
filer=$!
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env4.txt"
for t in gpu gpu_list gpu_device lib; do
  timeout 400 .devx/test-$t --ignored --test-threads=1 >"$out/test4-$t.log" 2>&1; echo "test-$t rc=$?" >>"$out/env4.txt"
  tail -2 "$out/test4-$t.log"
done
wait $filer; cat $f >/dev/null
log=$out/runs4.tsv; echo -e "round\tfn\tdev\tbuild\twall_ms\tleaf_ms\tdigest" >$log
for r in $(seq $rounds); do
 for a in "-a kt128|0,1" "-a parallelhash256|0,1" "-H 8|0,1" "-a kt128|0"; do
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
 uptime >>"$out/env4.txt"
done
for a in "-a kt128" "-a parallelhash256"; do
  echo "cpu $a $(.devx/new/treehash --backend cpu $a --no-names $f | cut -c1-16)" >>"$out/env4.txt"
done
for b in lock new; do for a in "-a kt128"; do
  echo "== $b --backend gpu --device 0,1 $a"
  TREEHASH_TRACE=1 .devx/$b/treehash --backend gpu --device 0,1 $a --timings --no-names $f 2>&1 | grep -vE "chunks from|last node fed"
done; done >"$out/traces4.txt"
python3 - "$log" >"$out/summary4.md" <<'PY'
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
cat "$out/summary4.md"; cat "$out/env4.txt"; cat "$out/traces4.txt"
