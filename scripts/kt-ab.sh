#!/usr/bin/env bash
# TEMPORARY (issue 23): A/B of the ways the standard functions' CPU walk
# reads a file, chosen by TREEHASH_DEV_STD_ACCESS (src/standard/run.rs,
# `DevAccess`); delete with that variable once a variant is chosen.
#
#   scripts/kt-ab.sh TREEHASH_BINARY FILE_8GIB [ROUNDS]
#
# Needs k12sum and b3sum on PATH (or beside the binary). Whole processes,
# the file page-cached first, each round running every command once in
# turn (variants alternate), medians of ROUNDS (default 5). Prints one
# markdown table: KT128 and ParallelHash256 (B = 8192) under each variant
# with --backend cpu, beside k12sum, b3sum and SHA3-256 LI at H = 8; KT128
# under auto; KT128 of the default variant on 1, 4, 8 and 16 threads; one
# thread on a 1 GiB copy (the per-core rates of KT128, ParallelHash256 and
# LI H = 8, and k12sum's); KT128 of a 1 KiB file against k12sum, 50 runs.
# Checks that every variant's digest agrees, and KT128's with k12sum's.
#
# Variants: windows,serial (main before: windows mapped, read in and
# unmapped by helper threads, chaining values fed after each piece);
# windows (the same, values fed beside the next piece); whole (one mapping
# of the file, faulted in by the workers, as b3sum and k12sum do); pread
# (each task reads its 512 KiB run into its worker's buffer; the default).
# whole and pread walk 128 MiB pieces unless piece=MIB says otherwise.
set -euo pipefail
bin=${1:?usage: kt-ab.sh TREEHASH_BINARY FILE_8GIB [ROUNDS]}
file=${2:?usage: kt-ab.sh TREEHASH_BINARY FILE_8GIB [ROUNDS]}
rounds=${3:-5}
bin=$(realpath "$bin")
PATH="$PATH:$(dirname "$bin")"
for tool in k12sum b3sum; do
    command -v "$tool" >/dev/null || { echo "kt-ab.sh: $tool not on PATH" >&2; exit 1; }
done
variants=(windows,serial windows whole whole,piece=32 pread pread,piece=32 pread,piece=512)
work=$(mktemp -d "${TMPDIR:-/tmp}/kt-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c $((1 << 30)) "$file" >"$work/1g.bin"
head -c 1024 "$file" >"$work/1k.bin"
cat "$file" "$work/1g.bin" >/dev/null

declare -A times digests
# run KEY [VAR=VALUE...] COMMAND...: one timed run (ms, to 0.01), its
# digest (the line's first word) kept under KEY.
run() {
    local key=$1
    shift
    local start end out
    start=$EPOCHREALTIME
    out=$(env "$@")
    end=$EPOCHREALTIME
    times[$key]+="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) * 1000 }') "
    digests[$key]=${out%% *}
}
median() { # KEY
    tr ' ' '\n' <<<"${times[$1]}" | grep . | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$(median "$1")" -v b="$(median "$2")" 'BEGIN { printf "%.2f", a / b }'; }
row() { # LABEL KEY [RATIO_LABEL RATIO_KEY]...
    local label=$1 key=$2
    shift 2
    local ratios="" runs
    while [ $# -ge 2 ]; do
        ratios+="${ratios:+; }$1 $(ratio "$key" "$2")"
        shift 2
    done
    runs=${times[$key]}
    if [ "$(wc -w <<<"$runs")" -gt 10 ]; then
        runs="$(wc -w <<<"$runs") runs, fastest $(tr ' ' '\n' <<<"$runs" | grep . | sort -g | head -1)"
    fi
    printf '| %s | %s | %s | %s | %s |\n' "$label" "$(median "$key")" "$runs" "$ratios" "${digests[$key]:0:16}"
}
same() { # KEY... : the digests agree
    local first=${digests[$1]}
    for key in "$@"; do
        [ "${digests[$key]}" = "$first" ] || { echo "kt-ab.sh: digests differ: $1 and $key" >&2; exit 1; }
    done
}

for _ in $(seq "$rounds"); do
    run k12 k12sum "$file"
    run b3 b3sum "$file"
    run li "$bin" --no-names --backend cpu -H 8 "$file"
    for v in "${variants[@]}"; do
        run "kt $v" TREEHASH_DEV_STD_ACCESS="$v" "$bin" --no-names --backend cpu -a kt128 "$file"
        run "ph $v" TREEHASH_DEV_STD_ACCESS="$v" "$bin" --no-names --backend cpu -a parallelhash256 "$file"
    done
    run "kt auto" "$bin" --no-names -a kt128 "$file"
done
for t in 1 4 8 16; do
    for _ in $(seq "$rounds"); do
        run "kt t$t" "$bin" --no-names --backend cpu --threads "$t" -a kt128 "$file"
    done
done
for _ in $(seq "$rounds"); do
    run "1g kt" "$bin" --no-names --backend cpu --threads 1 -a kt128 "$work/1g.bin"
    run "1g k12" k12sum --num-threads 1 "$work/1g.bin"
    run "1g ph" "$bin" --no-names --backend cpu --threads 1 -a parallelhash256 "$work/1g.bin"
    run "1g li" "$bin" --no-names --backend cpu --threads 1 -H 8 "$work/1g.bin"
done
for _ in $(seq 50); do
    run "1k kt" "$bin" --no-names -a kt128 "$work/1k.bin"
    run "1k k12" k12sum "$work/1k.bin"
done

same k12 "kt auto" "kt t1" "kt t4" "kt t8" "kt t16"
for v in "${variants[@]}"; do
    same k12 "kt $v"
    same "ph windows" "ph $v"
done
same "1g kt" "1g k12"
same "1k kt" "1k k12"

echo "## kt-ab: $(basename "$bin") on $(basename "$file") ($(stat -c %s "$file") bytes), $(nproc) cores, median of $rounds, $(date -u +%F)"
echo
echo "| case | median ms | runs (ms) | ratios | digest |"
echo "|---|---:|---|---|---|"
row "k12sum" k12
row "b3sum" b3
row "SHA3-256 LI H=8, cpu" li
for v in "${variants[@]}"; do
    row "KT128 cpu, $v" "kt $v" "×k12sum" k12 "×b3sum" b3
done
for v in "${variants[@]}"; do
    row "ParallelHash256 cpu, $v" "ph $v" "×LI" li
done
row "KT128 auto, default variant" "kt auto" "×k12sum" k12
for t in 1 4 8 16; do
    row "KT128 cpu --threads $t, default variant" "kt t$t" "×(1 thread)" "kt t1"
done
row "1 GiB, one thread: KT128" "1g kt" "×k12sum" "1g k12"
row "1 GiB: k12sum --num-threads 1" "1g k12"
row "1 GiB, one thread: ParallelHash256" "1g ph" "×LI" "1g li"
row "1 GiB, one thread: SHA3-256 LI H=8" "1g li"
row "1 KiB: KT128 (auto)" "1k kt" "×k12sum" "1k k12"
row "1 KiB: k12sum" "1k k12"
