#!/usr/bin/env bash
# Session 4 A/B on the device: per-task reads (parts, and part 0 of 1 as a
# probe for the single-file path), lanes (cc9dc28), lists at H = 0, Dask.
set -u
m=scripts/measure.py; bin=.devperf; k=.devkt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"; lscpu | grep -E "Model name|^CPU\(s\)"
head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
for _ in 1 2 3 4 5 6 7 8; do cat /tmp/one-gib.bin; done >/tmp/big-8.bin
cat /tmp/big-8.bin >/dev/null
echo "## 8 GiB H=8 single file, cpu, 16 threads (interleaved rows)"
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for r in 1 2; do
  $m --repeat 5 --label "base (789575d)" -- $k/th-base --backend cpu /tmp/big-8.bin
  $m --repeat 5 --label "new, no lanes" -- $k/th-nolanes --backend cpu /tmp/big-8.bin
  $m --repeat 5 --label "new + lanes" -- $bin/treehash --backend cpu /tmp/big-8.bin
  $m --repeat 5 --label "new + lanes: part 0 of 1 (per-task reads)" -- $bin/treehash part --backend cpu --parts 1 --index 0 /tmp/big-8.bin -o /tmp/p01
  $m --repeat 5 --label "base: part 0 of 1" -- $k/th-base part --backend cpu --parts 1 --index 0 /tmp/big-8.bin -o /tmp/p01b
done
$m --repeat 5 --label "b3sum" -- $bin/b3sum /tmp/big-8.bin
$m --repeat 5 --label "cat" -- cat /tmp/big-8.bin
echo "digests: $($bin/treehash --no-names /tmp/big-8.bin) $($bin/treehash join --no-names /tmp/p01) $($k/th-base --no-names /tmp/big-8.bin)"
echo "## parts: 4 x 4 threads vs one process of 16"
REPS=5 bash scripts/parts-parallel.sh $bin/treehash /tmp/big-8.bin 4 4
echo "base:"; REPS=5 bash scripts/parts-parallel.sh $k/th-base /tmp/big-8.bin 4 4
echo "## lists"
mkdir -p /tmp/h0; for i in $(seq 1 64); do head -c $((128 << 20)) /tmp/big-8.bin > /tmp/h0/f$i; done; cat /tmp/h0/* > /dev/null
mkdir -p /tmp/mid; python3 - <<'PY'
import random, os
r = random.Random(7); blob = open('/tmp/one-gib.bin','rb').read(8 << 20)
for i in range(200):
    n = r.randint(1 << 20, 8 << 20); open(f'/tmp/mid/f{i:03d}','wb').write(blob[:n])
PY
cat /tmp/mid/* >/dev/null
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for r in 1 2; do
  $m --repeat 1 --label "64x128 MiB H=0: base" -- sh -c "$k/th-base -H 0 /tmp/h0/*"
  $m --repeat 3 --label "64x128 MiB H=0: new" -- sh -c "$bin/treehash -H 0 /tmp/h0/*"
  $m --repeat 5 --label "200x1-8 MiB H=8: base" -- sh -c "$k/th-base /tmp/mid/*"
  $m --repeat 5 --label "200x1-8 MiB H=8: no lanes" -- sh -c "$k/th-nolanes /tmp/mid/*"
  $m --repeat 5 --label "200x1-8 MiB H=8: lanes" -- sh -c "$bin/treehash /tmp/mid/*"
done
$m --repeat 3 --label "64x128 MiB: sha256sum" -- sh -c "sha256sum /tmp/h0/*"
$m --repeat 3 --label "64x128 MiB: b3sum" -- sh -c "$bin/b3sum /tmp/h0/*"
$m --repeat 5 --label "200x1-8 MiB: b3sum" -- sh -c "$bin/b3sum /tmp/mid/*"
cmp <($k/th-base -H 0 /tmp/h0/*) <($bin/treehash -H 0 /tmp/h0/*) && echo "H=0 list digests equal"
cmp <($k/th-base /tmp/mid/*) <($bin/treehash /tmp/mid/*) && echo "mid list digests equal"
if [ -n "${DASK:-}" ]; then
  site=/tmp/treehash-site; rm -rf $site
  python3 -m pip install --quiet --no-index --no-deps --target $site $bin/wheels/treehash-*.whl $bin/wheels/dask/*.whl
  PYTHONPATH=$site python3 -P python/bench_dask.py /tmp/big-8.bin --cli $bin/treehash --workers 4 --threads 4 --cli-threads 16 --repeat 5 2>&1
fi
echo "## KT128 on the GPU, traced"
$m --repeat 3 --label "kt128 --backend gpu" -- $bin/treehash -a kt128 --backend gpu /tmp/big-8.bin
$m --repeat 3 --label "LI H=8 --backend gpu" -- $bin/treehash --backend gpu /tmp/big-8.bin
for r in 1 2; do
TREEHASH_TRACE=1 $bin/treehash -a kt128 --backend gpu /tmp/big-8.bin 2>/tmp/kt.trace >/dev/null
grep -c "chunk launch" /tmp/kt.trace
awk '/chunk launch/ { n++; for (i = 1; i <= NF; i++) { if ($i == "after") f += $(i+1); if ($i == "staged") s += $(i+2); if ($i == "queued") q += $(i+2) } }
     /last node fed/ { d += $(NF-1); nd++ }
     END { printf "launches %d: slot waits %.1f ms, staging %.1f ms, queueing %.1f ms; last node fed %d times, %.1f ms\n", n, f, s, q, nd, d }' /tmp/kt.trace
head -3 /tmp/kt.trace; grep "chunk launch" /tmp/kt.trace | sed -n '1,3p;100,103p'; tail -3 /tmp/kt.trace
done
