set -u
.devbin/test-gpu --ignored --test-threads=1 --nocapture > $OUT/gpu-tests-x2.log 2>&1
grep -E "^test |^test result|^input |SKIPPED" $OUT/gpu-tests-x2.log
MULTI_SKIP_HOST=1 MULTI_TESTS=gpus_that_start_late scripts/gpu-check.sh multi > $OUT/multi.log 2>&1
f=/tmp/multi.bin; m=scripts/measure.py
{ echo; echo "## A/B, the binary before (a1a1afa), same file"; echo
  echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
  for r in 1 2; do
    $m --repeat 3 --label "r$r new --backend gpu --device all" -- .devbin/treehash --backend gpu --device all -H 8 $f
    $m --repeat 3 --label "r$r old --backend gpu --device all" -- .devbin/treehash-old --backend gpu --device all -H 8 $f
    $m --repeat 3 --label "r$r new --backend gpu --device 0" -- .devbin/treehash --backend gpu --device 0 -H 8 $f
  done
  $m --repeat 3 --label "new --backend gpu --device all, 1 GiB head" -- sh -c "head -c 1073741824 $f | .devbin/treehash --backend gpu --device all -H 8 -"
  $m --repeat 3 --label "new --backend gpu --device all, 8 GiB head" -- sh -c "head -c 8589934592 $f | .devbin/treehash --backend gpu --device all -H 8 -"
  echo; .devbin/treehash --backend gpu --device 0,7 -H 8 $f; echo "exit code for --device 0,7: $?"
} >> $OUT/multi.md 2>&1
grep -v "piece of" $OUT/multi.md | tail -75
