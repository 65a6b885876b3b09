#!/usr/bin/env bash
# Session 13, run 4, on a machine of two GPUs: the new build's GPU suites
# (the four two-GPU tests among them), then old (86350f1) against new
# (one lane-kernel trait; GPUs alone share a standard function's waves
# evenly), 7 rounds with the order swapped each round, whole
# processes on page-cached files: two GPUs and one on 16 GiB, the CPU's
# paths on 8 GiB. Carried: .devx/{tip,new}/treehash, .devx/test-*.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin e=/tmp/eight.bin gb=16 rounds=${ROUNDS:-7}
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env4.txt"
( [ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
  head -c $((8<<30)) $f >$e; cat $f $e >/dev/null ) &
filer=$!
for t in gpu gpu_list gpu_device lib; do
  timeout 300 .devx/test-$t --ignored --test-threads=1 >"$out/test4-$t.log" 2>&1; echo "test-$t rc=$?" >>"$out/env4.txt"
  grep -E "^test result" "$out/test4-$t.log" >>"$out/env4.txt"
done
# The test whose chunk shares drifted in run 3, twice more.
for k in 1 2; do
  timeout 120 .devx/test-gpu --ignored --exact files_on_several_gpus_give_the_reference_digest >"$out/test4-again.log" 2>&1
  echo "files_on_several_gpus again $k rc=$?" >>"$out/env4.txt"
done
wait $filer; cat $f $e >/dev/null
log=$out/runs4.tsv; echo -e "round\tfn\tdev\tbuild\twall_ms\tleaf_ms\tdigest" >$log
for r in $(seq $rounds); do
 for a in "-a kt128|0,1|$f" "-a parallelhash256|0,1|$f" "-a kt256|0,1|$f" "-H 8|0,1|$f" \
          "-H 8|cpu|$e" "-H 4 -D 4|cpu|$e" "-a kt128|cpu|$e" "-a parallelhash256|cpu|$e"; do
   IFS='|' read -r fa dev file <<<"$a"
   if [ "$dev" = cpu ]; then be="--backend cpu"; else be="--backend gpu --device $dev"; fi
   bs="tip new"; [ $(( r % 2 )) = 0 ] && bs="new tip"
   for b in $bs; do
     s=$(date +%s%N)
     # shellcheck disable=SC2086
     o=$(.devx/$b/treehash $be $fa --timings --no-names $file 2>$out/err.txt)
     ms=$(( ($(date +%s%N) - s) / 1000000 ))
     echo -e "$r\t$fa\t$dev\t$b\t$ms\t$(grep -m1 'leaf hashing' $out/err.txt | awk '{print $3}')\t${o:0:16}" >>$log
   done
 done
 uptime >>"$out/env4.txt"
done
for a in "-a kt128" "-a parallelhash256" "-a kt256"; do
  echo "cpu 16 GiB $a $(.devx/new/treehash --backend cpu $a --no-names $f | cut -c1-16)" >>"$out/env4.txt"
done
python3 - "$log" >"$out/summary4.md" <<'PY'
import sys,statistics,collections
rows=[l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
g=collections.defaultdict(list); dg=collections.defaultdict(set)
for r,fn,d,c,w,leaf,dig in rows:
    g[(fn,d,c)].append((int(w),float(leaf) if leaf else float('nan'))); dg[(fn,d=='cpu')].add(dig)
print("| fn | devices | build | median wall ms | min | median leaf ms | min | leaf runs |")
print("|---|---|---|---:|---:|---:|---:|---|")
for k,v in sorted(g.items()):
    print(f"| {k[0]} | {k[1]} | {k[2]} | {statistics.median(x[0] for x in v):.0f} | {min(x[0] for x in v)} | {statistics.median(x[1] for x in v):.0f} | {min(x[1] for x in v):.0f} | {' '.join(f'{x[1]:.0f}' for x in v)} |")
print()
for k,d in dg.items(): print(f"{k[0]} {'8 GiB' if k[1] else '16 GiB'}: digests {sorted(d)}")
PY
cat "$out/summary4.md" "$out/env4.txt"
