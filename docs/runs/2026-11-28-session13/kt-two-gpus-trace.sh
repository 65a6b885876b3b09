#!/usr/bin/env bash
# Session 13, run 1: where KT128's time goes on two GPUs (lockstep), against
# one GPU and LI H = 8: traces summarised (per launch: wait for a free slot,
# staging; per wave: each GPU's submit time), then 3 rounds of whole
# processes. Carried: .devx/tip/treehash (86350f1).
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 t=.devx/tip/treehash
{ date -u; nvidia-smi --query-gpu=index,name --format=csv; nproc; uptime; } >"$out/env.txt"
head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin
cat $f >/dev/null; cat $f >/dev/null
summ() { python3 - "$1" <<'PY'
import re,sys,collections
L=open(sys.argv[1]).read().splitlines()
la=[l for l in L if 'chunk launch' in l]
free=[float(re.search(r'slot free after ([\d.]+)',l).group(1)) for l in la]
st=[float(re.search(r'staged in ([\d.]+)',l).group(1)) for l in la]
sz=[int(re.search(r': (\d+) B;',l).group(1)) for l in la]
if la:
  print(f"launches {len(la)}, bytes {sum(sz)/2**30:.2f} GiB, mean {sum(sz)/len(sz)/2**20:.1f} MiB; wait for slot total {sum(free):.1f} ms; staging total {sum(st):.1f} ms = {sum(sz)/sum(st)/1e6:.1f} GB/s per stager")
w=[l for l in L if 'chunks from' in l]
g=collections.defaultdict(float); gb=collections.defaultdict(int)
for l in w:
  for name,b,ms in re.findall(r'(\w+) (\d+) B ([\d.]+) ms',l): g[name]+=float(ms); gb[name]+=int(b)
print(f"waves {len(w)}: " + "; ".join(f"{k} {gb[k]/2**30:.2f} GiB in {g[k]:.1f} ms" for k in g))
fed=[float(re.search(r'in ([\d.]+) ms',l).group(1)) for l in L if 'last node fed' in l]
print(f"last node fed {len(fed)} times, {sum(fed):.1f} ms")
for l in L:
  if re.search(r'leaf hashing|copies|kernels|GPU init|gpu\d +|walked|open \(',l): print(l)
PY
}
for d in 0,1 0; do
  echo "== kt128 --device $d" >>"$out/traces.txt"
  TREEHASH_TRACE=1 $t --backend gpu --device $d -a kt128 --timings --no-names $f >"$out/tr.txt" 2>&1
  summ "$out/tr.txt" >>"$out/traces.txt"
  grep -m12 "chunk launch\|chunks from" "$out/tr.txt" >>"$out/traces.txt"
  echo "== LI H=8 --device $d" >>"$out/traces.txt"
  TREEHASH_TRACE=1 $t --backend gpu --device $d -H 8 --timings --no-names $f >"$out/tr.txt" 2>&1
  summ "$out/tr.txt" >>"$out/traces.txt"
done
log=$out/runs.tsv; echo -e "round\tfn\tdev\twall_ms\tleaf_ms\tdigest" >$log
for r in 1 2 3; do for a in "-a kt128|0,1" "-a kt128|0" "-H 8|0,1" "-H 8|0"; do
  s=$(date +%s%N)
  o=$($t --backend gpu --device ${a#*|} ${a%|*} --timings --no-names $f 2>$out/err.txt)
  e=$(( ($(date +%s%N) - s) / 1000000 ))
  echo -e "$r\t${a%|*}\t${a#*|}\t$e\t$(grep -m1 'leaf hashing' $out/err.txt | awk '{print $3}')\t${o:0:16}" >>$log
done; done
cat "$out/traces.txt"; column -t $log
