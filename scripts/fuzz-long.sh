#!/usr/bin/env bash
# Long runs of the fuzz targets on a machine of many cores from targets
# built elsewhere (the GPU machines have no Rust toolchain): each target
# with one job per core (libFuzzer's -fork) for SECONDS, from its seeds.
# Prints each target's last status line (total executions, crashes) and
# fails if any run found a crash.
#
#   here:  cargo +nightly fuzz build && mkdir -p .devfuzz &&
#          cp fuzz/target/x86_64-unknown-linux-gnu/release/{part_bytes,part_set,check_lines,labels} .devfuzz/
#   there: scripts/fuzz-long.sh .devfuzz SECONDS TARGET...
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: fuzz-long.sh BIN_DIR SECONDS TARGET...}
seconds=${2:?}
shift 2
out=${OUT:-/tmp}
jobs=$(nproc)
status=0
for target in "$@"; do
    corpus=/tmp/fuzz-corpus/$target
    mkdir -p "$corpus" "$out/artifacts-$target"
    log=$out/fuzz-$target.log
    "$bin/$target" "$corpus" "fuzz/corpus/$target" -fork="$jobs" -max_total_time="$seconds" \
        -timeout=10 -artifact_prefix="$out/artifacts-$target/" >"$log" 2>&1
    rc=$?
    echo "== $target, $seconds s, $jobs jobs, exit $rc"
    grep -E "^#[0-9]+" "$log" | tail -1
    grep -E "crash|DEADLYSIGNAL|panicked" "$log" | head -3
    [ "$rc" -eq 0 ] || status=1
done
exit $status
