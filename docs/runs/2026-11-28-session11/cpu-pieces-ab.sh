#!/usr/bin/env bash
set -uo pipefail
out=${OUT:-x-out}; mkdir -p "$out"
f=/tmp/two.bin gb=16 rounds=${ROUNDS:-7}
[ -f $f ] || { head -c $((1<<30)) /dev/urandom >/tmp/one.bin; for _ in $(seq $gb); do cat /tmp/one.bin; done >$f; rm /tmp/one.bin; }
cat $f >/dev/null; cat $f >/dev/null
{ date -u; nproc; uptime; } >"$out/env.txt"
# The 7-round run (ROUNDS=7) had these configurations and wrote
# auto-timings.txt after the rounds; the 15-round run (ROUNDS=15) CONFIGS=cpu
# (cpu32 and cpu16 only) and no auto-timings.txt. Build "pieces" was 283d308's
# tree (2 MiB a worker, no cap), "old" 940c38b.
if [ "${CONFIGS:-}" = cpu ]; then
  configs=("cpu32|--backend cpu --threads 32" "cpu16|--backend cpu --threads 16")
else
  configs=("cpu16|--backend cpu --threads 16" "cpu32|--backend cpu --threads 32" "auto|" "auto-gpu0|--device 0")
fi
log=$out/runs.tsv; echo -e "round\tconfig\tbuild\tms\tdigest" >$log
for r in $(seq $rounds); do
  for c in "${configs[@]}"; do n=${c%%|*}; a=${c#*|}
    for b in old pieces; do
      [ $(( r % 2 )) = 0 ] && [ $b = old ] && continue
      s=$(date +%s%N); o=$(.devx/$b/treehash -H 8 $a --no-names $f); e=$(( ($(date +%s%N) - s) / 1000000 ))
      echo -e "$r\t$n\t$b\t$e\t${o:0:16}" >>$log
    done
    if [ $(( r % 2 )) = 0 ]; then s=$(date +%s%N); o=$(.devx/old/treehash -H 8 $a --no-names $f); e=$(( ($(date +%s%N) - s) / 1000000 )); echo -e "$r\t$n\told\t$e\t${o:0:16}" >>$log; fi
  done
  uptime >>"$out/env.txt"
done
[ "${CONFIGS:-}" = cpu ] || for b in old pieces; do echo "== $b auto --timings"; .devx/$b/treehash -H 8 --timings --no-names $f 2>&1 | tail -12; done >"$out/auto-timings.txt" 2>&1
python3 - "$log" <<'PY' | tee "$out/summary.md"
import sys,statistics,collections
rows=[l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
g=collections.defaultdict(list); d=set()
for r,c,b,ms,dig in rows: g[(c,b)].append(int(ms)); d.add(dig)
print("| config | build | median ms | runs |"); print("|---|---|---:|---|")
for k,v in g.items(): print(f"| {k[0]} | {k[1]} | {statistics.median(v)} | {' '.join(map(str,v))} |")
print("\ndigests", d)
PY
