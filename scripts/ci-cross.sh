#!/usr/bin/env bash
# The other platforms (docs/PLATFORMS.md), checked from this x86-64 host:
# 1. aarch64 Linux: clippy with warnings denied, then the library's unit
#    tests (with the reference crate's, a default member of the workspace)
#    and the vector and differential tests cross-built once and run
#    under qemu-user twice: `-cpu max` (ARMv8.2 SHA3: the two-lane kernel)
#    and `-cpu cortex-a72` (no SHA3: the portable kernel, as on Graviton2).
# 2. aarch64 Linux, the README's install: `cargo install --locked --path
#    cli` cross-built, and the installed tool's digests under qemu-user
#    (with and without SHA3) held to the x86-64 build's, then --check.
# 3. aarch64 Linux, the Python wheel: the abi3 wheel cross-built with
#    maturin and its tests run by Debian's arm64 CPython under qemu-user.
# 4. macOS: `cargo check` of the library (every target), the tool's binary
#    and the Python crate, for aarch64-apple-darwin and x86_64-apple-darwin.
# 5. s390x Linux (big-endian): the library's unit tests and the vector and
#    differential tests cross-built and run under qemu-user.
# Every tool it needs is installed if missing (Debian packages, rustup
# targets, maturin and pytest from PyPI, arm64 CPython's Debian packages);
# a tool still missing then fails the run, never skips a step.
# Own target folder. About 22 minutes on a 2-core machine (one build job,
# an empty target folder), 5 of them steps 2 and 3.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
    gcc-s390x-linux-gnu libc6-dev-s390x-cross python3 python3-venv)
tools=(qemu-aarch64 qemu-s390x aarch64-linux-gnu-gcc s390x-linux-gnu-gcc
    python3 dpkg-deb)
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

# Absolute: steps 2 and 3 run the tools they build from other folders.
CARGO_TARGET_DIR="$(realpath -m "${CROSS_TARGET_DIR:-target/cross}")"
export CARGO_TARGET_DIR
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

# 2. aarch64 Linux, the README's install, as a user on Grace or Graviton
#    runs it. The inputs are the spec's test pattern (byte k is k mod 251)
#    at 0, 1000 and 10^7 bytes: one block, a few blocks, and many blocks
#    on every thread. Each function's lines are held to the lines of the
#    x86-64 build below (`treehash --tag`, commit bf1b657, 2026-11-27;
#    tests/vectors.rs holds both builds to the standards' vectors), plain
#    SHA3-256's to Python's hashlib; then the tool checks them back
#    (--check), and finds a wrong digest.
aarch64_install="$CARGO_TARGET_DIR/aarch64-install"
rm -rf "$aarch64_install"
cargo install --locked --path cli --target aarch64-unknown-linux-gnu --root "$aarch64_install"
aarch64_check="$CARGO_TARGET_DIR/aarch64-check"
rm -rf "$aarch64_check"
mkdir -p "$aarch64_check"
inputs=(ptn-0 ptn-1000 ptn-10000000)
python3 - "$aarch64_check" "${inputs[@]}" <<'EOF'
import hashlib, pathlib, sys
folder = pathlib.Path(sys.argv[1])
pattern = bytes(range(251))
with open(folder / "expected.sums", "w") as sums:
    for name in sys.argv[2:]:
        length = int(name.split("-")[1])
        data = (pattern * (length // 251 + 1))[:length]
        (folder / name).write_bytes(data)
        sums.write(f"SHA3-256 ({name}) = {hashlib.sha3_256(data).hexdigest()}\n")
EOF
cat >>"$aarch64_check/expected.sums" <<'EOF'
SHA3-256-LI(H=8,D=4,B=136) (ptn-0) = f0af9926204bd3b42f01e696f317a33d380c4c7b911d02a89e35e50a1c39b09c
SHA3-256-LI(H=8,D=4,B=136) (ptn-1000) = 436ee3b293729fef0abcf9195453004ae398ca66ad634d0b07ed68c0cc990ee9
SHA3-256-LI(H=8,D=4,B=136) (ptn-10000000) = 31e2e30646d634810dae3e87b1a688501f4150cc181acb656f9e4639cfab704f
KT128 (ptn-0) = 1ac2d450fc3b4205d19da7bfca1b37513c0803577ac7167f06fe2ce1f0ef39e5
KT128 (ptn-1000) = 1dd2b16dfc918d9d1071bc1227e7decbe72f5d5e1a6724de8a1d234e975288c6
KT128 (ptn-10000000) = d085083f8203598ef5c71eae0ef6916de40c393ac7cc2b1a6fbc41184d65d5f2
ParallelHash256(B=8192) (ptn-0) = fe94d54ec0a5083a8880b4b4102ba049708ed8d2fd83f489fa5490ba9bf994ab35d8daa2340bbdb9b7b010851df783c7954af215f8ebc5fe3a206602077cb384
ParallelHash256(B=8192) (ptn-1000) = 24cadd3a824196dbfd2a76aa50edb0f451e1774e2b4d85e35b33f9a696b585f2e85328d7fd83ef400c1c01206a968c1018b03f776e672c2b8f76527bd91869a1
ParallelHash256(B=8192) (ptn-10000000) = 761e16a527292d217fb3d499dca464ce12db8b3708a41ece716709bbe81ab134d432e9b41dc8701976caa7a45299a0822946f5d3aa0a4708d0c604c6fe78f62e
EOF
# The LI line of ptn-1000 with its last digit changed.
echo 'SHA3-256-LI(H=8,D=4,B=136) (ptn-1000) = 436ee3b293729fef0abcf9195453004ae398ca66ad634d0b07ed68c0cc990ee8' \
    >"$aarch64_check/wrong.sums"
aarch64_tool=("$aarch64_install/bin/treehash")
for cpu in max cortex-a72; do
    echo "ci-cross: the installed aarch64 tool under qemu-aarch64 -cpu $cpu"
    tool=(qemu-aarch64 -cpu "$cpu" -L "$QEMU_LD_PREFIX_AARCH64" "${aarch64_tool[@]}")
    (
        cd "$aarch64_check"
        "${tool[@]}" --version
        "${tool[@]}" --help >/dev/null
        for function in "-H 0" "" "-a kt128" "-a parallelhash256"; do
            # shellcheck disable=SC2086 # the flags split into words
            "${tool[@]}" --tag $function "${inputs[@]}"
        done >"got-$cpu.sums"
        diff expected.sums "got-$cpu.sums"
        "${tool[@]}" --check expected.sums
        if "${tool[@]}" --check wrong.sums >/dev/null 2>&1; then
            echo "ci-cross: --check passed a wrong digest under -cpu $cpu" >&2
            exit 1
        fi
        echo "ci-cross: --check refused a wrong digest"
    )
done

# 3. aarch64 Linux, the Python wheel: the abi3 wheel that `pip install
#    ./python` builds there, cross-built with maturin, is unzipped into a
#    folder on PYTHONPATH of Debian's arm64 CPython, run by qemu-user
#    without binfmt. That CPython and its libraries are the arm64 packages
#    of this host's Debian release, fetched with apt into a state of their
#    own (no arm64 architecture is added to the host's dpkg) and unpacked
#    into a root for qemu's -L. pytest and its dependencies are pure
#    Python, installed for that CPython's version. The wrapper passes
#    itself as argv[0] (`-0`), so sys.executable is the wrapper and the
#    tests that start sys.executable start it under qemu too; qemu reads
#    the CPU from QEMU_CPU. The package's tests run under `-cpu max` (the
#    SHA3 kernel), the CLI comparisons against the aarch64 tool of step 2
#    (the GPU tests and dask's are reported as skipped); under `-cpu
#    cortex-a72` a short check holds the wheel to hashlib and to step 2's
#    expected lines.
aarch64_wheel="$CARGO_TARGET_DIR/aarch64-wheel"
rm -rf "$aarch64_wheel"
mkdir -p "$aarch64_wheel"/{apt/lists/partial,apt/cache/archives/partial,apt/state,root,bin,site}
python3 -m venv "$aarch64_wheel/venv"
"$aarch64_wheel/venv/bin/pip" install --quiet maturin
"$aarch64_wheel/venv/bin/maturin" build --release -m python/Cargo.toml \
    --target aarch64-unknown-linux-gnu -o "$aarch64_wheel/wheels"
wheels=("$aarch64_wheel"/wheels/treehash-*-abi3-*aarch64.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
    echo "ci-cross: expected one aarch64 abi3 wheel, found: ${wheels[*]}" >&2
    exit 1
fi
python3 -m zipfile -e "${wheels[0]}" "$aarch64_wheel/site"
: >"$aarch64_wheel/apt/status"
apt_arm64=(apt-get -qq -o APT::Architecture=arm64 -o APT::Architectures=arm64
    -o Dir::State="$aarch64_wheel/apt/state" -o Dir::State::Lists="$aarch64_wheel/apt/lists"
    -o Dir::State::status="$aarch64_wheel/apt/status" -o Dir::Cache="$aarch64_wheel/apt/cache"
    -o APT::Sandbox::User=root)
"${apt_arm64[@]}" update
"${apt_arm64[@]}" install -y --download-only --no-install-recommends python3-minimal libpython3-stdlib
for deb in "$aarch64_wheel"/apt/cache/archives/*.deb; do
    dpkg-deb -x "$deb" "$aarch64_wheel/root"
done
guest_python="$aarch64_wheel/bin/python3"
cat >"$guest_python" <<EOF
#!/bin/sh
exec qemu-aarch64 -L "$aarch64_wheel/root" -0 "\$0" "$aarch64_wheel/root/usr/bin/python3" "\$@"
EOF
guest_tool="$aarch64_wheel/bin/treehash"
cat >"$guest_tool" <<EOF
#!/bin/sh
exec qemu-aarch64 -L "$QEMU_LD_PREFIX_AARCH64" "${aarch64_tool[0]}" "\$@"
EOF
chmod +x "$guest_python" "$guest_tool"
guest_version=$(QEMU_CPU=max "$guest_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
"$aarch64_wheel/venv/bin/pip" install --quiet --target "$aarch64_wheel/pytest" \
    --python-version "$guest_version" --only-binary=:all: pytest
echo "ci-cross: the aarch64 wheel's tests, CPython $guest_version under qemu-aarch64 -cpu max"
QEMU_CPU=max TREEHASH_CLI="$guest_tool" PYTHONPATH="$aarch64_wheel/site:$aarch64_wheel/pytest" \
    "$guest_python" -m pytest -q -rs -p no:cacheprovider python/tests
for cpu in max cortex-a72; do
    echo "ci-cross: the aarch64 wheel against hashlib and the expected lines, -cpu $cpu"
    QEMU_CPU=$cpu PYTHONPATH="$aarch64_wheel/site" \
        "$guest_python" - "$aarch64_check" "${inputs[@]}" <<'EOF'
import hashlib, pathlib, platform, sys
import treehash
assert platform.machine() == "aarch64", platform.machine()
folder = pathlib.Path(sys.argv[1])
for name in sys.argv[2:]:
    data = (folder / name).read_bytes()
    assert treehash.sha3_256(data).digest() == hashlib.sha3_256(data).digest(), name
    assert treehash.shake_128(data).hexdigest(100) == hashlib.shake_128(data).hexdigest(100), name
# A --tag label is the hash object's name, but plain SHA3-256's, which is
# hashlib's name.
checked = 0
for line in (folder / "expected.sums").read_text().splitlines():
    label, rest = line.split(" (", 1)
    name, expected = rest.split(") = ")
    algorithm = {"SHA3-256": "sha3_256"}.get(label, label)
    path = folder / name
    assert treehash.file_digest(str(path), algorithm=algorithm).hexdigest() == expected, line
    h = treehash.new(algorithm)
    data = path.read_bytes()
    for at in range(0, len(data), 1 << 20):
        h.update(memoryview(data)[at : at + (1 << 20)])
    assert h.name == algorithm and h.hexdigest() == expected, line
    checked += 1
print(f"{checked} digests equal, treehash {treehash.__version__} on CPython {platform.python_version()}")
EOF
done

# 4. macOS (no linker for it here: checked, not built).
for target in aarch64-apple-darwin x86_64-apple-darwin; do
    echo "ci-cross: cargo check for $target"
    cargo check --target "$target" -p treehash --all-targets
    cargo check --target "$target" -p treehash-cli --all-targets
    cargo check --target "$target" -p treehash-python --all-targets
done

# 5. s390x Linux (big-endian). Skipped by name, for qemu's reason: the two
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
