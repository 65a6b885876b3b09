#!/usr/bin/env bash
# Builds of treehash side by side on one page-cached file: each round runs
# every binary once, in turn, with the same arguments; prints the median
# wall time of each (whole processes, start to exit) and checks that their
# digests agree. For telling which commit moved a figure.
#
#   scripts/ab-binaries.sh FILE ROUNDS "ARGS" BINARY...
#
# e.g. scripts/ab-binaries.sh /tmp/big-8.bin 5 "--backend cpu -H 8" .devbin/ab/*
set -euo pipefail
file=${1:?usage: ab-binaries.sh FILE ROUNDS "ARGS" BINARY...}
rounds=${2:?}
args=${3:?}
shift 3
cat "$file" >/dev/null
declare -A times digests
for _ in $(seq "$rounds"); do
    for bin in "$@"; do
        start=$(date +%s%N)
        # shellcheck disable=SC2086
        digest=$("$bin" $args --no-names "$file")
        times[$bin]+="$(( ($(date +%s%N) - start) / 1000000 )) "
        digests[$bin]=$digest
    done
done
echo "| binary | args | median ms | runs (ms) | digest |"
echo "|---|---|---:|---|---|"
first=""
for bin in "$@"; do
    median=$(tr ' ' '\n' <<<"${times[$bin]}" | grep . | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
    echo "| $(basename "$bin") | $args | $median | ${times[$bin]}| ${digests[$bin]:0:16} |"
    first=${first:-${digests[$bin]}}
    [ "${digests[$bin]}" = "$first" ] || { echo "digests differ" >&2; exit 1; }
done
