#!/usr/bin/env bash
# The library's unit tests that Miri can run, and the reference crate's
# (reference/), under Miri (nightly): undefined
# behaviour, out-of-bounds access and aliasing violations in the code they
# reach fail here. docs/ASSURANCE.md lists what is covered, what is not and
# why. About 6 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "ci-miri: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
    exit 1
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup component add --toolchain nightly miri rust-src
fi

# The library (`-p treehash --lib`; the tool in cli/ has none), without
# the default features: no CUDA bindings (foreign code, which Miri cannot
# run). The filters below name the library's modules, so the reference
# crate, a default member of the workspace, is a run of its own (step 1).
# Own target folder.
export CARGO_TARGET_DIR="${MIRI_TARGET_DIR:-target/miri-ci}"
harness_args=("$@")
miri_test() {
    cargo +nightly miri test -p treehash --lib --no-default-features -- "$@" "${harness_args[@]}"
}

# 1. Single-threaded tests under Stacked Borrows, the stricter aliasing
#    model, with isolation (no files, no clock): the check lines, labels and
#    parameters, the tree arithmetic, the parts' plan and nodes, the
#    scalar permutation and sponges, the fast sponge's portable path, the
#    pure parts of the schedules; then every test of the reference crate
#    (Keccak-p, cSHAKE, KT, ParallelHash, TurboSHAKE).
MIRIFLAGS="${MIRIFLAGS:-}" miri_test \
    checkfile:: params:: function:: label:: error:: tree:: sponge:: test_reference:: \
    cpu::keccak:: cpu::walk:: cpu::platform::tests::portable \
    cpu::platform::tests::the_portable cpu::chunks::tests::a_short \
    cpu::chunks::tests::no_chunks cpu::chunks::tests::standard_specs \
    parts:: standard::tests standard::sp800_185 standard::rfc9861 hasher::auto sigbus:: \
    message::tests schedule::tests schedule::chunks::tests cpu::tests::pieces_grow \
    --skip standard::sponge::tests::matches_the_reference_sponge_however_fed \
    --skip message::tests::file_pieces --skip message::tests::pieces_come_unread \
    --skip schedule::tests::any_split --skip schedule::tests::progress_counts \
    --skip schedule::tests::files_and_sequential_inputs \
    --skip schedule::tests::engines_walking_a_file_apart \
    --skip schedule::tests::an_engine_that_fails_walking_apart \
    --skip schedule::chunks::tests::a_ --skip schedule::chunks::tests::any_split \
    --skip schedule::chunks::tests::files_shared --skip schedule::chunks::tests::pieces_of_many
MIRIFLAGS="${MIRIFLAGS:-}" cargo +nightly miri test -p treehash-reference --lib -- "${harness_args[@]}"

# 2. The AVX2 kernel's permutation and block loads, built with AVX2 on
#    (under Miri a CPU feature is there only where the build enables it;
#    Miri emulates the AVX2 intrinsics, not AVX-512's `vpternlogq`).
#    Own target folder: other flags, another build.
RUSTFLAGS="${RUSTFLAGS:-} -Ctarget-feature=+avx2" CARGO_TARGET_DIR="$CARGO_TARGET_DIR-avx2" \
    MIRIFLAGS="${MIRIFLAGS:-}" miri_test cpu::keccak_x4:: cpu::platform::tests::the_avx2

# 3. Tests that run leaves on rayon's workers, and work started on
#    several threads at once (`threads::tests`), under Tree Borrows:
#    crossbeam-epoch, under rayon, breaks Stacked Borrows' rules
#    (crossbeam-rs/crossbeam#545) and keeps to Tree Borrows'. The pools
#    live to the process's end, so their memory is not a leak.
MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-tree-borrows -Zmiri-ignore-leaks" miri_test \
    threads::tests cpu::tests::broken_hand_overs cpu::tests::inputs_run_inline
