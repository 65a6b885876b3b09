#!/usr/bin/env bash
# A bounded run of every fuzz target (fuzz/README.md): each for
# FUZZ_SECONDS (60 by default) from its seed corpus, failing on the first
# crash or failed property. New inputs the fuzzer finds go to
# fuzz/corpus-runtime/ (ignored by git), never into the seeds.
#
#   scripts/ci-fuzz.sh                 every target, 60 s each
#   FUZZ_SECONDS=600 scripts/ci-fuzz.sh part_set
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "ci-fuzz: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
    exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo +nightly install cargo-fuzz --locked
fi

seconds="${FUZZ_SECONDS:-60}"
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# Every target is built before any runs, so that a build error stops the
# run before the clock starts.
cargo +nightly fuzz build

failed=()
for target in "${targets[@]}"; do
    mkdir -p "fuzz/corpus-runtime/$target"
    echo "ci-fuzz: $target for ${seconds} s"
    # The first folder takes what the fuzzer finds; the seeds are only read.
    if ! cargo +nightly fuzz run "$target" \
        "fuzz/corpus-runtime/$target" "fuzz/corpus/$target" \
        -- -max_total_time="$seconds" -timeout=10 -print_final_stats=1; then
        failed+=("$target")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "ci-fuzz: failed: ${failed[*]} (the inputs are under fuzz/artifacts/)" >&2
    exit 1
fi
