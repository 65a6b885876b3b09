#!/usr/bin/env bash
# N parts of one file hashed at once on this host, each a `treehash part`
# process of T threads, against one process of N·T threads (issue 25's Dask
# target without Dask: what the parts themselves cost), whole processes,
# page-cached, median of REPS (default 5), each row one run of measure.py.
#   scripts/parts-parallel.sh TREEHASH FILE [N] [T...]
# PART_ARGS (environment) adds options to every part, e.g. the hidden
# `--piece-bytes 4194304` (the piece length a part is read in).
set -euo pipefail
th=$1 file=$2 n=${3:-4}
shift $(( $# < 3 ? $# : 3 ))
threads=("${@:-4}")
reps=${REPS:-5}
m=scripts/measure.py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat "$file" >/dev/null
echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
for t in "${threads[@]}"; do
    $m --repeat "$reps" --label "one process, --threads $((n * t))" -- "$th" --backend cpu --threads $((n * t)) "$file"
    # shellcheck disable=SC2016
    $m --repeat "$reps" --label "$n parts at once, --threads $t each ${PART_ARGS:-}" -- sh -c '
        th=$1 file=$2 n=$3 t=$4 dir=$5; shift 5
        i=0; while [ "$i" -lt "$n" ]; do
            "$th" part --backend cpu --threads "$t" "$@" --parts "$n" --index "$i" "$file" -o "$dir/p$i" &
            i=$((i + 1))
        done
        wait' sh "$th" "$file" "$n" "$t" "$dir" ${PART_ARGS:-}
done
joined=$("$th" join --no-names "$dir"/p*)
whole=$("$th" --no-names --backend cpu "$file")
[ "$joined" = "$whole" ] && echo "joined digest equals one process's: $whole" ||
    { echo "joined digest $joined differs from one process's $whole"; exit 1; }
