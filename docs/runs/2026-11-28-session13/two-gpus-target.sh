#!/usr/bin/env bash
# Session 13, run 10 (run 6 found no two-GPU machine lent): the four
# two-GPU tests of the tip's tree, then issue 33's two-GPU target on one
# machine: the host's staging ceiling for both GPUs (benches/gpu_host.rs,
# no hashing), and LI H = 8 and KT128 on one GPU and on two, 5 rounds
# rotated, 16 GiB page-cached, whole processes.
# Carried: .devx/new/treehash, .devx/test-gpu, .devx/bench-gpu_host.
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-5} t=.devx/new/treehash
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env6.txt"
( [ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
cat $f >/dev/null ) &
filer=$!
# SKIP_TESTS=1: the timings alone (run 11, on run 10's machine, whose
# timing loop had lost $t to the tests' loop).
for name in every_gpu_takes_a_share gpus_begun_side_by_side_share_the_work_from_the_first_piece \
         sequential_inputs_on_several_gpus_give_the_reference_digest files_on_several_gpus_give_the_reference_digest; do
  [ -n "${SKIP_TESTS:-}" ] && break
  timeout 150 .devx/test-gpu --ignored --exact $name >"$out/test10.log" 2>&1; echo "$name rc=$?" >>"$out/env6.txt"
done
wait $filer; cat $f >/dev/null
TREEHASH_BENCH_TOGETHER_ONLY=1 TREEHASH_BENCH_FILE=$f timeout 150 .devx/bench-gpu_host 2>&1 | sed -n '1,12p' >"$out/ceiling6.txt"
log=$out/runs6.tsv; echo -e "round\tfn\tdev\twall_ms\tleaf_ms\tshares\tdigest" >$log
rows=("-H 8|0" "-H 8|0,1" "-a kt128|0" "-a kt128|0,1")
for r in $(seq $rounds); do
 for k in 0 1 2 3; do
   a=${rows[$(( (k + r) % 4 ))]}
   s=$(date +%s%N)
   # shellcheck disable=SC2086
   o=$($t --backend gpu --device ${a#*|} ${a%|*} --timings --no-names $f 2>$out/err.txt)
   ms=$(( ($(date +%s%N) - s) / 1000000 ))
   sh=$(grep -E "^  gpu[0-9]" $out/err.txt | awk '{print $1 ":" $2}' | tr '\n' ' ')
   echo -e "$r\t${a%|*}\t${a#*|}\t$ms\t$(grep -m1 'leaf hashing' $out/err.txt | awk '{print $3}')\t$sh\t${o:0:16}" >>$log
 done
 uptime >>"$out/env6.txt"
done
for a in "-a kt128" "-H 8"; do echo "cpu $a $($t --backend cpu $a --no-names $f | cut -c1-16)" >>"$out/env6.txt"; done
python3 - "$log" >"$out/summary6.md" <<'PY'
import sys,statistics,collections
rows=[l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
g=collections.defaultdict(list); dg=collections.defaultdict(set); sh=collections.defaultdict(list)
for r,fn,d,w,leaf,shares,dig in rows:
    g[(fn,d)].append((int(w),float(leaf))); dg[fn].add(dig); sh[(fn,d)].append(shares.strip())
print("| fn | devices | median leaf ms | min | leaf runs | median wall ms | shares (last round) |")
print("|---|---|---:|---:|---|---:|---|")
for k,v in sorted(g.items()):
    print(f"| {k[0]} | {k[1]} | {statistics.median(x[1] for x in v):.0f} | {min(x[1] for x in v):.0f} | {' '.join(f'{x[1]:.0f}' for x in v)} | {statistics.median(x[0] for x in v):.0f} | {sh[k][-1]} |")
print()
for fn,d in dg.items(): print(f"{fn}: digests {sorted(d)}")
PY
cat "$out/summary6.md" "$out/ceiling6.txt" "$out/env6.txt"
