#!/usr/bin/env bash
# The library's unit tests under AddressSanitizer (nightly), with the
# reference crate's (a default member of the workspace): out-of-bounds
# access, use-after-free and leaks in the unsafe code (SIMD loads, the file
# windows, SIGBUS recovery) fail here. Own target folder: instrumented
# objects never mix with the others. docs/ASSURANCE.md says what it covers.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "ci-asan: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
    exit 1
fi

# --target: RUSTFLAGS then reach the target's crates only, not build
# scripts and proc macros (which would fail to load ASan's runtime).
# LeakSanitizer runs too (ASan's default on Linux).
RUSTFLAGS="-Zsanitizer=address" \
    CARGO_TARGET_DIR="${ASAN_TARGET_DIR:-target/asan}" \
    cargo +nightly test --release --lib --target x86_64-unknown-linux-gnu "$@"
