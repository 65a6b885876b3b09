#!/usr/bin/env bash
# Checks the README against what CI and users rely on (issue 32, item 9):
#   - every "Rust X.Y" it states is Cargo.toml's rust-version;
#   - it is at most 200 lines long;
#   - it holds the two commands CI runs, each on a line of its own:
#       cargo run --release -- README.md --height 4 --degree 4
#       cargo test --release
# Exits 0 when all hold; otherwise prints one line saying what is wrong on
# standard error and exits 1.
#
#   scripts/check-readme.sh [README] [CARGO_TOML]   # paths from the repository root
set -euo pipefail
cd "$(dirname "$0")/.."

readme=${1:-README.md}
cargo_toml=${2:-Cargo.toml}
max_lines=200
commands=(
    'cargo run --release -- README.md --height 4 --degree 4'
    'cargo test --release'
)

fail() {
    echo "check-readme: $*" >&2
    exit 1
}

[ -r "$readme" ] || fail "$readme cannot be read"
[ -r "$cargo_toml" ] || fail "$cargo_toml cannot be read"

# 1.89 and 1.89.0 name the same version.
normalize() { sed -E 's/^([0-9]+\.[0-9]+)\.0$/\1/' <<<"$1"; }

want=$(sed -nE 's/^[[:space:]]*rust-version[[:space:]]*=[[:space:]]*"([^"]+)".*/\1/p' "$cargo_toml" | head -n 1)
[ -n "$want" ] || fail "$cargo_toml states no rust-version"
want=$(normalize "$want")

lines=$(wc -l <"$readme")
[ "$lines" -le "$max_lines" ] || fail "$readme has $lines lines, more than $max_lines"

# Each command on a line of its own (an indented or fenced code line).
trimmed=$(sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' "$readme")
for command in "${commands[@]}"; do
    grep -qxF -- "$command" <<<"$trimmed" ||
        fail "$readme lacks the command \`$command\` on a line of its own"
done

stated=$(grep -oE 'Rust [0-9]+\.[0-9]+(\.[0-9]+)?' "$readme" | sort -u || true)
[ -n "$stated" ] || fail "$readme states no Rust version (Cargo.toml's rust-version is $want)"
while read -r word version; do
    [ "$(normalize "$version")" = "$want" ] ||
        fail "$readme says $word $version, but Cargo.toml's rust-version is $want"
done <<<"$stated"
