#!/usr/bin/env bash
# Session 12's two-GPU run: the GPU suites of the new build on two GPUs, then
# old (434b473), lock (df8dbe5: the devices started by one helper, pieces in
# lockstep) and new (GPUs begun side by side walk the file apart) as whole
# processes on a page-cached 16 GiB file, interleaved with the order rotated
# each round. Carried: .devx/{old,lock,new}/treehash and .devx/test-gpu*.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-5}
( [ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }; cat $f >/dev/null; cat $f >/dev/null ) &
filer=$!
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env.txt"
for t in gpu gpu_list gpu_device; do
  timeout 300 .devx/test-$t --ignored --test-threads=1 >"$out/test-$t.log" 2>&1; echo "test-$t rc=$?" >>"$out/env.txt"
  tail -2 "$out/test-$t.log"
done
wait $filer; cat $f >/dev/null
for b in old lock new; do
  for a in "-H 8" "-H 10"; do
    TREEHASH_TRACE=1 .devx/$b/treehash --backend gpu --device 0,1 $a --timings --no-names $f >"$out/trace-$b-${a// /}.txt" 2>&1
  done
done
log=$out/runs.tsv; echo -e "round\tfn\tdev\tbuild\twall_ms\tleaf_ms\tdigest" >$log
orders=("old lock new" "new old lock" "lock new old")
for r in $(seq $rounds); do
 for a in "-H 8" "-H 10" "-a kt128"; do
  for d in 0,1 0; do
   for b in ${orders[$(( r % 3 ))]}; do
     s=$(date +%s%N)
     o=$(.devx/$b/treehash --backend gpu --device $d $a --timings --no-names $f 2>$out/err.txt)
     e=$(( ($(date +%s%N) - s) / 1000000 ))
     leaf=$(grep -m1 "leaf hashing" $out/err.txt | awk '{print $3}')
     echo -e "$r\t$a\t$d\t$b\t$e\t$leaf\t${o:0:16}" >>$log
   done
  done
 done
 uptime >>"$out/env.txt"
done
for a in "-H 8" "-H 10" "-a kt128"; do
  echo "cpu $a $(.devx/new/treehash --backend cpu $a --no-names $f | cut -c1-16)" >>"$out/env.txt"
done
python3 - "$log" >"$out/summary.md" <<'PY'
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
cat "$out/summary.md"; cat "$out/env.txt"
