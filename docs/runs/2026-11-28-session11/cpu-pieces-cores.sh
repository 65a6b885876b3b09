#!/usr/bin/env bash
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-5} b=.devx/new/treehash
[ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
cat $f >/dev/null; cat $f >/dev/null
{ date -u; nproc; lscpu | grep -E "Model name|Thread|Core|Socket|NUMA|Flags" | cut -c1-200; uptime; } >"$out/env.txt"
read_probe() { local t=$1 size part start; size=$(stat -c %s $f); part=$(( size / t )); start=$(date +%s%N)
  for i in $(seq 0 $(( t - 1 ))); do dd if=$f of=/dev/null bs=1M iflag=skip_bytes,count_bytes skip=$(( i * part )) count=$part status=none & done; wait
  echo $(( ($(date +%s%N) - start) / 1000000 )); }
configs=("16|" "32|" "32|--piece-bytes 67108864" "16|--piece-bytes 67108864" "32|--piece-bytes 134217728")
log=$out/runs.tsv; echo -e "round\tthreads\targs\tms\tleaf_ms\tdigest" >$log
for r in $(seq $rounds); do
  for c in "${configs[@]}"; do t=${c%%|*}; a=${c#*|}
    s=$(date +%s%N); o=$($b --backend cpu -H 8 --threads $t $a --timings --no-names $f 2>$out/err.txt); e=$(( ($(date +%s%N) - s) / 1000000 ))
    leaf=$(grep -m1 "leaf hashing" $out/err.txt | awk '{print $3}')
    echo -e "$r\t$t\t$a\t$e\t$leaf\t${o:0:16}" >>$log
  done
  echo -e "$r\tprobe16\tdd\t$(read_probe 16)\t\t" >>$log
  echo -e "$r\tprobe32\tdd\t$(read_probe 32)\t\t" >>$log
  uptime >>"$out/env.txt"
done
python3 - "$log" <<'PY' | tee "$out/summary.md"
import sys,statistics,collections
rows=[l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
g=collections.defaultdict(list); d=set()
for r,t,a,ms,leaf,dig in rows:
    g[(t,a)].append(int(ms)); dig and d.add(dig)
print("| threads | args | median ms | runs |"); print("|---|---|---:|---|")
for k,v in g.items(): print(f"| {k[0]} | {k[1]} | {statistics.median(v)} | {' '.join(map(str,v))} |")
print("\ndigests", d)
PY
