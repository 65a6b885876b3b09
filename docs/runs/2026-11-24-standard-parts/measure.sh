#!/usr/bin/env bash
# Parts and joins of the standard functions (issue 25), whole processes on
# page-cached files:
#  1. per-part throughput: part 0 of N (its share of a 4 GiB file over its
#     wall and CPU time) against one process hashing the whole file, for
#     KT128, KT256, ParallelHash128 and ParallelHash256 (B = 8192), with the
#     bytes the part read (rchar, counted by the kernel);
#  2. joins of many chunks: every part of a 4 GiB file made, then
#     `treehash join` of them (KT128: 524,288 chunks; ParallelHash128 with
#     B = 1024: 4,194,304 chunks, 128 MiB of chaining values).
# Usage: measure.sh DIR [TREEHASH]   (DIR holds the file, 4 GiB)
set -euo pipefail
dir=$1
th=${2:-target/release/treehash}
runs=${RUNS:-3}
mkdir -p "$dir"
four=$dir/4g.bin
[ -f "$four" ] || head -c $((4 << 30)) /dev/urandom > "$four"
cat "$four" > /dev/null

echo "# $(date -u +%F) $(uname -n), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# $("$th" --version), --backend cpu, median of $runs; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# "wall-s cpu-s rchar" of one run of a command, its output discarded.
run() {
    sh -c 'io() { sed -n "s/^rchar: //p" /proc/$$/io; }
        before=$(io); /usr/bin/time -f "%e %U %S" -o "$0.time" "$@" > /dev/null 2>&1 || exit 1
        after=$(io); read -r e u s < "$0.time"
        echo "$e $(echo "$u + $s" | bc) $((after - before))"' "$dir/t" "$@"
}
# The median run (by wall time) of RUNS runs.
median_of() {
    for _ in $(seq "$runs"); do run "$@"; done | sort -n | sed -n "$(((runs + 1) / 2))p"
}

size=$(stat -c %s "$four")
echo
echo "## 1. One process and part 0 of N, 4 GiB"
echo "function	what	N	wall s	CPU s	GB/s of its share (wall)	GB/s per CPU-second	bytes read"
for f in kt128 kt256 parallelhash128 parallelhash256; do
    read -r wall cpu bytes <<< "$(median_of "$th" --backend cpu -a "$f" "$four")"
    printf '%s\tone process\t1\t%s\t%s\t%.2f\t%.2f\t%s\n' "$f" "$wall" "$cpu" \
        "$(echo "$size / $wall / 10^9" | bc -l)" "$(echo "$size / $cpu / 10^9" | bc -l)" "$bytes"
    for n in 1 2 4 16; do
        read -r wall cpu bytes <<< "$(median_of "$th" part --backend cpu -a "$f" \
            --parts "$n" --index 0 "$four" -o "$dir/p")"
        share=$((size / n))
        printf '%s\tpart 0 of N\t%s\t%s\t%s\t%.2f\t%.2f\t%s\n' "$f" "$n" "$wall" "$cpu" \
            "$(echo "$share / $wall / 10^9" | bc -l)" "$(echo "$share / $cpu / 10^9" | bc -l)" "$bytes"
    done
done

echo
echo "## 2. Joins, 4 GiB"
echo "function	N	chunks	parts' bytes (all)	join wall s	join CPU s	join max RSS KB	digest = one process"
for spec in "kt128" "kt256" "parallelhash128 -B 1024"; do
    # shellcheck disable=SC2086
    set -- $spec
    for n in 4 64; do
        rm -f "$dir"/j.*
        for i in $(seq 0 $((n - 1))); do
            "$th" part --backend cpu -a "$@" --parts "$n" --index "$i" "$four" -o "$dir/j.$i"
        done
        chunks=$("$th" part -a "$@" --plan --parts 1 "$four" | sed -n '1s/.*: \([0-9]*\) chunks.*/\1/p')
        total=$(cat "$dir"/j.* | wc -c)
        read -r wall cpu _ <<< "$(median_of "$th" join "$dir"/j.*)"
        rss=$( { /usr/bin/time -f "%M" "$th" join "$dir"/j.* > /dev/null; } 2>&1 )
        same=no
        [ "$("$th" join "$dir"/j.*)" = "$("$th" --backend cpu -a "$@" "$four")" ] && same=yes
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$spec" "$n" "$chunks" "$total" "$wall" "$cpu" "$rss" "$same"
    done
done
rm -f "$dir"/j.* "$dir/p" "$dir/t.time"
