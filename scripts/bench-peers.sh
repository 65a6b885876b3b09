#!/usr/bin/env bash
# Times, on one file and in one run, the checksum tools that are installed
# (openssl dgst -sha3-256, b3sum, sha256sum, sha3sum) next to treehash's
# backends, and prints one markdown table (median of REPEAT runs, default 3).
#
#   scripts/bench-peers.sh FILE [TREEHASH_BINARY]
#
# The file is read once first so that every tool finds it in the page cache.
set -uo pipefail
file=${1:?usage: $0 FILE [treehash-binary]}
treehash=${2:-target/release/treehash}
repeat=${REPEAT:-3}
[ -f "$file" ] || { echo "$file: not a regular file" >&2; exit 1; }
size=$(stat -c %s "$file")
cat "$file" >/dev/null

# PATH may lack tools that sit beside the treehash binary (the GPU machine
# gets b3sum carried in .devbin).
PATH="$PATH:$(dirname "$treehash")"

median_ms() { # command... ; prints the median wall time in ms
    local times=()
    for _ in $(seq "$repeat"); do
        local start=$(date +%s%N)
        "$@" >/dev/null 2>&1 || { echo "FAILED"; return; }
        times+=($(( ($(date +%s%N) - start) / 1000000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (repeat + 1) / 2 ))p"
}

row() { # label, command...
    local label=$1; shift
    local ms; ms=$(median_ms "$@")
    if [ "$ms" = FAILED ]; then
        printf '| %s | failed | | |\n' "$label"
        return
    fi
    [ "$ms" -gt 0 ] || ms=1
    printf '| %s | %s | %s | `%s` |\n' "$label" "$ms" \
        "$(awk -v b="$size" -v m="$ms" 'BEGIN { printf "%.2f", b / m / 1e6 }')" "$*"
}

echo "## Peers on $(basename "$file") ($size bytes), median of $repeat, $(nproc) cores, $(date -u +%F)"
echo
echo "| tool | ms | GB/s | command |"
echo "|---|---:|---:|---|"
command -v openssl >/dev/null && row "openssl SHA3-256 (one process)" openssl dgst -sha3-256 "$file"
command -v sha3sum >/dev/null && row "sha3sum -a 256" sha3sum -a 256 "$file"
command -v sha256sum >/dev/null && row "sha256sum (SHA-256)" sha256sum "$file"
command -v b3sum >/dev/null && row "b3sum (BLAKE3, all cores)" b3sum "$file"
command -v b3sum >/dev/null && row "b3sum (BLAKE3, 1 thread)" b3sum --num-threads 1 "$file"
row "treehash H=0 (plain SHA3-256, CPU)" "$treehash" --backend cpu -H 0 "$file"
row "treehash H=8 D=4, CPU" "$treehash" --backend cpu -H 8 "$file"
if "$treehash" --backend gpu -H 0 /dev/null >/dev/null 2>&1; then
    row "treehash H=8 D=4, GPU" "$treehash" --backend gpu -H 8 "$file"
    row "treehash H=10 D=4, GPU" "$treehash" --backend gpu -H 10 "$file"
fi
echo
echo "Times are whole processes (start-up included: about 0.2 s of CUDA start-up for the GPU rows)."
