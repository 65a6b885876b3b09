#!/usr/bin/env bash
# Parts and joins (issue 25), whole processes on page-cached files:
#  1. per-part throughput (the part's share of the file over its wall time)
#     against one process hashing the whole file, H = 8, N = 1 … 16;
#  2. bytes each part reads (rchar, counted by the kernel);
#  3. parts and joins at 2^24 leaves: H = 12, D = 4 and H = 24, D = 2, on a
#     file that fills every leaf (2^24 × 136 bytes).
# Usage: measure.sh DIR [TREEHASH] [BACKEND]   (DIR holds the files, ~7 GB)
set -euo pipefail
dir=$1
th=${2:-target/release/treehash}
backend=${3:-cpu}
runs=${RUNS:-3}
mkdir -p "$dir"
big=$dir/4g.bin
full=$dir/l24.bin
[ -f "$big" ] || head -c $((4 << 30)) /dev/urandom > "$big"
[ -f "$full" ] || head -c $((16777216 * 136)) /dev/urandom > "$full"

echo "# $(date -u +%F) $(uname -n), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# treehash $("$th" --version), backend $backend, median of $runs unless said"

# "wall-seconds cpu-seconds bytes-read" of a command (its output discarded;
# wall time from date, to the 0.1 ms; CPU time to the 10 ms of time(1)):
# CPU time (user + system) says more than wall time on a shared machine;
# rchar is counted by the kernel (a reaped child's reads go to its parent).
timed() {
    sh -c 'r() { while read -r k v; do [ "$k" = rchar: ] && echo "$v"; done < /proc/$$/io; }
        t=$(mktemp); a=$(r); start=$(date +%s.%N)
        /usr/bin/time -f "%U %S" -o "$t" "$@" > /dev/null 2>&1 || exit 1
        end=$(date +%s.%N); b=$(r); read -r u s < "$t"; rm -f "$t"
        echo "$(echo "scale=4; ($end - $start) / 1" | bc) $(echo "$u + $s" | bc) $((b - a))"' sh "$@"
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

cat "$big" "$full" > /dev/null
size=$(stat -c %s "$big")
echo
echo "## 1. One process and parts, 4 GiB, -H 8 (runs of $((65536 * 136)) bytes per stripe at N = 1)"
echo "what	N	wall s	CPU s	GB/s of its share (wall)	GB/s per CPU-second	bytes read (part 0)"
one=$(for r in $(seq "$runs"); do timed "$th" --backend "$backend" -H 8 "$big"; done)
wall=$(echo "$one" | awk '{print $1}' | median); cpu=$(echo "$one" | awk '{print $2}' | median)
printf 'one process\t1\t%s\t%s\t%s\t%s\t(mapped)\n' "$wall" "$cpu" \
    "$(echo "scale=2; $size / $wall / 10^9" | bc)" "$(echo "scale=2; $size / $cpu / 10^9" | bc)"
for n in 1 2 4 8 16; do
    lines=$(for r in $(seq "$runs"); do
        timed "$th" part --backend "$backend" -H 8 --parts "$n" --index 0 "$big" -o "$dir/p"
    done)
    wall=$(echo "$lines" | awk '{print $1}' | median); cpu=$(echo "$lines" | awk '{print $2}' | median)
    read_bytes=$(echo "$lines" | head -1 | awk '{print $3}')
    share=$((size / n))
    printf 'part 0 of N\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$wall" "$cpu" \
        "$(echo "scale=2; $share / $wall / 10^9" | bc)" "$(echo "scale=2; $share / $cpu / 10^9" | bc)" "$read_bytes"
done

echo
echo "## 2. Parts and joins at 2^24 leaves, $(stat -c %s "$full") bytes (every leaf holds 136 bytes)"
echo "tree	N	parts' wall s (sum, max)	parts' CPU s (sum)	part bytes (largest)	join s (median)	digest = one process"
for tree in "-H 12 -D 4" "-H 24 -D 2"; do
    # shellcheck disable=SC2086
    want=$("$th" --backend "$backend" $tree --no-names "$full")
    for n in 1 2 3 16 64; do
        rm -f "$dir"/j.*
        sum=0; max=0; cpu=0
        for i in $(seq 0 $((n - 1))); do
            # shellcheck disable=SC2086
            line=$(timed "$th" part --backend "$backend" $tree --parts "$n" --index "$i" "$full" -o "$dir/j.$i")
            w=$(echo "$line" | awk '{print $1}'); c=$(echo "$line" | awk '{print $2}')
            sum=$(echo "$sum + $w" | bc); max=$(echo "if ($w > $max) $w else $max" | bc)
            cpu=$(echo "$cpu + $c" | bc)
        done
        largest=$(stat -c %s "$dir"/j.* | sort -n | tail -1)
        join=$(for r in $(seq "$runs"); do timed "$th" join "$dir"/j.* | awk '{print $1}'; done | median)
        got=$("$th" join --no-names "$dir"/j.*)
        [ "$got" = "$want" ] && same=yes || same="NO: $got"
        printf '%s\t%s\t%s, %s\t%s\t%s\t%s\t%s\n' "$tree" "$n" "$sum" "$max" "$cpu" "$largest" "$join" "$same"
    done
done
rm -f "$dir"/j.* "$dir/p"
