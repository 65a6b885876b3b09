#!/usr/bin/env bash
# Large trees (issue 21): the CPU backend's throughput and peak RSS by height
# on one page-cached file, whole processes, the heights taking turns within
# each round, the median of the rounds.
#
#   scripts/large-trees.sh BINARY [FILE [RUNS]]
#
# BINARY  a prebuilt treehash (no Rust toolchain is needed where this runs)
# FILE    the input; default /tmp/large-trees-8g.bin, written from
#         /dev/urandom (8 GiB, or SIZE from the environment, e.g. SIZE=2G)
#         when missing
# RUNS    rounds, default 5
#
# Environment: HEIGHTS (default "8 10 11 12"), DEGREE (default 4),
# THREADS (passed as --threads when set).
#
# Needs bash and coreutils only. Peak RSS comes from GNU time (/usr/bin/time)
# where it is installed; otherwise from the largest VmHWM seen in
# /proc/PID/status, read every 10 ms (it can miss a peak in the last 10 ms,
# and the polling takes a little CPU). Prints a markdown table: per height
# the median seconds and GB/s, the ratio to the first height's GB/s, every
# run's seconds, the largest peak RSS, the states' size (200 bytes for each
# leaf that holds a block, SHA3-256 and B = 136 as run here) and whether the
# peak stays within the states plus 512 MiB. Exit 1 if a run fails or a
# height's digests differ between rounds.
set -euo pipefail

bin=${1:?usage: large-trees.sh BINARY [FILE [RUNS]]}
file=${2:-/tmp/large-trees-8g.bin}
runs=${3:-5}
read -r -a heights <<< "${HEIGHTS:-8 10 11 12}"
degree=${DEGREE:-4}
extra=()
[[ -n ${THREADS:-} ]] && extra=(--threads "$THREADS")

[[ -x $bin ]] || { echo "large-trees.sh: $bin: not an executable" >&2; exit 2; }
if [[ ! -e $file ]]; then
    echo "writing ${SIZE:-8G} of random bytes to $file" >&2
    head -c "${SIZE:-8G}" /dev/urandom > "$file"
fi
size=$(stat -c %s "$file")
# Page-cache the file (twice: the second read shows it stayed cached).
cat "$file" > /dev/null
start=$(date +%s%N)
cat "$file" > /dev/null
echo "file: $file, $size bytes, re-read from the page cache in" \
    "$(( ($(date +%s%N) - start) / 1000000 )) ms" >&2

gnu_time=
if [[ -x /usr/bin/time ]] && /usr/bin/time -f %M -o /dev/null true 2> /dev/null; then
    gnu_time=/usr/bin/time
fi
echo "peak RSS from: ${gnu_time:-VmHWM polled every 10 ms}" >&2
echo "threads: ${THREADS:-every core} of $(nproc); $(uname -r); $(date -u +%F)" >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One process at height $1: sets wall_ns, rss_kb and digest.
run_once() {
    local h=$1 pid line key value
    local cmd=("$bin" --backend cpu -H "$h" -D "$degree" "${extra[@]}" "$file")
    local t0
    t0=$(date +%s%N)
    if [[ -n $gnu_time ]]; then
        "$gnu_time" -f %M -o "$tmp/rss" "${cmd[@]}" > "$tmp/out"
        wall_ns=$(( $(date +%s%N) - t0 ))
        rss_kb=$(tail -n 1 "$tmp/rss")
    else
        "${cmd[@]}" > "$tmp/out" &
        pid=$!
        rss_kb=0
        while kill -0 "$pid" 2> /dev/null; do
            while read -r key value _; do
                if [[ $key == VmHWM: ]] && (( value > rss_kb )); then
                    rss_kb=$value
                fi
            done < "/proc/$pid/status" 2> /dev/null || true
            sleep 0.01
        done
        wait "$pid"
        wall_ns=$(( $(date +%s%N) - t0 ))
    fi
    read -r digest _ < "$tmp/out"
}

declare -A times peak first_digest
for (( r = 1; r <= runs; r++ )); do
    for h in "${heights[@]}"; do
        if ! run_once "$h"; then
            echo "large-trees.sh: H = $h failed" >&2
            exit 1
        fi
        times[$h]+="$wall_ns "
        (( rss_kb > ${peak[$h]:-0} )) && peak[$h]=$rss_kb
        if [[ -z ${first_digest[$h]:-} ]]; then
            first_digest[$h]=$digest
        elif [[ ${first_digest[$h]} != "$digest" ]]; then
            echo "large-trees.sh: H = $h gave two digests" >&2
            exit 1
        fi
        echo "round $r, H = $h: $(( wall_ns / 1000000 )) ms, peak RSS $(( rss_kb / 1024 )) MiB" >&2
    done
done

# Milliseconds with three decimals, from nanoseconds.
ms() { printf '%d.%03d' $(( $1 / 1000000 )) $(( $1 / 1000 % 1000 )); }
# Bytes per nanosecond (GB/s), rounded to two decimals.
gbps() { local c=$(( (size * 100 + $1 / 2) / $1 )); printf '%d.%02d' $(( c / 100 )) $(( c % 100 )); }

echo
echo "| H | leaves | median ms | GB/s | × H = ${heights[0]} | runs (ms) | peak RSS MiB | states MiB | ≤ states + 512 MiB |"
echo "|---:|---:|---:|---:|---:|---|---:|---:|---|"
base=
for h in "${heights[@]}"; do
    read -r -a ns <<< "${times[$h]}"
    mapfile -t sorted < <(printf '%s\n' "${ns[@]}" | sort -n)
    median=${sorted[$(( ${#sorted[@]} / 2 ))]}
    [[ -z $base ]] && base=$median
    all=$(for t in "${ns[@]}"; do printf '%s ' "$(( t / 1000000 ))"; done)
    leaves=$(( degree ** h ))
    holding=$(( (size + 135) / 136 ))
    (( holding > leaves )) && holding=$leaves
    states=$(( (holding + 7) / 8 * 1600 ))
    rss_bytes=$(( peak[$h] * 1024 ))
    within=no
    (( rss_bytes <= states + (512 << 20) )) && within=yes
    ratio=$(( (base * 100 + median / 2) / median ))
    printf '| %s | %s | %s | %s | %d.%02d | %s| %d | %d | %s |\n' "$h" "$leaves" \
        "$(ms "$median")" "$(gbps "$median")" $(( ratio / 100 )) $(( ratio % 100 )) \
        "$all" $(( peak[$h] / 1024 )) $(( states >> 20 )) "$within"
done
