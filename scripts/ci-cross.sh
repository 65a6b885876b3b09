#!/usr/bin/env bash
# The other platforms (docs/PLATFORMS.md), checked from this x86-64 host:
# 1. aarch64 Linux: clippy with warnings denied, then the library's unit
#    tests (with the reference crate's, a default member of the workspace)
#    and the vector and differential tests cross-built once and run
#    under qemu-user twice: `-cpu max` (ARMv8.2 SHA3: the two-lane kernel)
#    and `-cpu cortex-a72` (no SHA3: the portable kernel, as on Graviton2).
# 2. macOS: `cargo check` of the library (every target), the tool's binary
#    and the Python crate, for aarch64-apple-darwin and x86_64-apple-darwin.
# 3. s390x Linux (big-endian): the library's unit tests and the vector and
#    differential tests cross-built and run under qemu-user.
# Every tool it needs is installed if missing (Debian packages, rustup
# targets); a tool still missing then fails the run, never skips a step.
# Own target folder. About 17 minutes on a 2-core machine (one build job,
# an empty target folder).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
    gcc-s390x-linux-gnu libc6-dev-s390x-cross)
tools=(qemu-aarch64 qemu-s390x aarch64-linux-gnu-gcc s390x-linux-gnu-gcc)
missing_tools() {
    local tool
    for tool in "${tools[@]}"; do
        command -v "$tool" >/dev/null || echo "$tool"
    done
}
if [ -n "$(missing_tools)" ]; then
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    "${as_root[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends \
        "${packages[@]}" >/dev/null
fi
if [ -n "$(missing_tools)" ]; then
    echo "ci-cross: missing after installing ${packages[*]}: $(missing_tools | tr '\n' ' ')" >&2
    exit 1
fi
targets=(aarch64-unknown-linux-gnu s390x-unknown-linux-gnu aarch64-apple-darwin x86_64-apple-darwin)
rustup target add "${targets[@]}"

export CARGO_TARGET_DIR="${CROSS_TARGET_DIR:-target/cross}"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc
export QEMU_LD_PREFIX_AARCH64=/usr/aarch64-linux-gnu
export QEMU_LD_PREFIX_S390X=/usr/s390x-linux-gnu

# No aarch64 test is skipped for qemu's sake (s390x's two are below): under
# qemu-aarch64 the unit tests' truncation test (input::tests::a_file_that_
# shrinks_is_an_error_when_mapped_or_read) passed 20 runs of 20 on
# 2026-11-27. The two tests that fail there for qemu's reasons are in
# suites this script does not run: tests/input.rs's truncation race (the
# emulated reads and the truncation land in another order than on a CPU)
# and a test that counts this process's reads in /proc/self/io (qemu's
# own reads are counted too). Skip them by name here, with the reason, if
# those suites are added.

# 1. aarch64 Linux. The tests are built once, requiring the SHA3 kernel's
#    tests to run (TREEHASH_REQUIRE_SHA3, build.rs). Under cortex-a72
#    TREEHASH_TEST_NO_SHA3 tells them this CPU lacks SHA3: detection must
#    find none, `Auto` must be portable, and the tests of every kernel check
#    the portable one; the SHA3 kernel's own tests, which require SHA3, are
#    skipped there by name.
cargo clippy --target aarch64-unknown-linux-gnu --all-targets -- -D warnings
export TREEHASH_REQUIRE_SHA3=1
aarch64_tests=(--release --target aarch64-unknown-linux-gnu --lib --test vectors --test differential)
cargo test "${aarch64_tests[@]}" --no-run
run_aarch64() {
    local cpu="$1"
    shift
    echo "ci-cross: aarch64 tests under qemu-aarch64 -cpu $cpu"
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -cpu $cpu -L $QEMU_LD_PREFIX_AARCH64" \
        cargo test "${aarch64_tests[@]}" -- "$@"
}
run_aarch64 max
TREEHASH_TEST_NO_SHA3=1 run_aarch64 cortex-a72 \
    --skip cpu::keccak_x2:: \
    --skip cpu::platform::sha3_tests::the_sha3_lanes \
    --skip cpu::chunks::tests::sha3_chunks
unset TREEHASH_REQUIRE_SHA3

# 2. macOS (no linker for it here: checked, not built).
for target in aarch64-apple-darwin x86_64-apple-darwin; do
    echo "ci-cross: cargo check for $target"
    cargo check --target "$target" -p treehash --all-targets
    cargo check --target "$target" -p treehash-cli --all-targets
    cargo check --target "$target" -p treehash-python --all-targets
done

# 3. s390x Linux (big-endian). Skipped by name, for qemu's reason: the two
#    unit tests that cut a file under a mapped window
#    (input::tests::a_file_cut_under_the_window_being_hashed_gets_an_error_not_a_crash,
#    input::tests::a_file_cut_and_grown_back_under_a_window_is_a_change).
#    qemu-s390x hands the guest's SIGBUS handler an si_addr that is no
#    address of the window (0x54e5118000000040 on 2026-11-27: its 32-bit
#    halves look swapped), where qemu-aarch64 and x86-64 give the faulting
#    address; `recover` then finds no window and the test's handler
#    aborts, as it must for an unknown fault (the second test only where a
#    page faults before the file grows back). Both pass under qemu-aarch64
#    and natively.
echo "ci-cross: s390x tests under qemu-s390x"
CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER="qemu-s390x -L $QEMU_LD_PREFIX_S390X" \
    cargo test --release --target s390x-unknown-linux-gnu --lib --test vectors --test differential \
    -- --skip input::tests::a_file_cut_under_the_window_being_hashed_gets_an_error_not_a_crash \
    --skip input::tests::a_file_cut_and_grown_back_under_a_window_is_a_change
