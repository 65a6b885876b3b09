#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora, fuzz/corpus/TARGET/.

- part_bytes: parts made by `treehash part` (LI with and without a prefix,
  at H = 0 and with a part that owns no leaf, KT128 and KT256 with C,
  ParallelHash with a small B), each whole and without its check value
  (the target also reads every input with a check value appended, so the
  fuzzer can change the fields and still reach their checks).
- part_set: bytes whose first byte picks each kind of parameters (LI,
  keyed LI, KT, ParallelHash, TurboSHAKE), the rest seeded random: the
  target draws the file, the split and the change to it from them.
- check_lines: lines as `treehash` writes them (plain, --tag, -z, names
  with a space, a backslash, a newline), and coreutils' forms.
- labels: a label of every function, in both cases.

    cargo build --release --bin treehash
    python3 scripts/fuzz-seeds.py [path/to/treehash]

The seeds are fixed (seeded random, files of fixed content): a re-run
writes the same files, except the parts, which record the files'
modification times.
"""

import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
CHECK_LEN = 16


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def part_bytes(treehash, work):
    data = bytes((i * 7 + 3) % 251 for i in range(20_000))
    (work / "f").write_bytes(data[:300])
    (work / "big").write_bytes(data)
    (work / "e").write_bytes(b"")
    # (name, file, index, parts, options)
    cases = [
        ("li", "f", 1, 3, ["-a", "sha3-256", "-H", "2", "-D", "4", "-B", "16"]),
        ("li-keyed", "f", 0, 2, ["-a", "shake128", "-H", "1", "-D", "2", "-l", "20",
                                 "--prefix-hex", "0011"]),
        ("li-h0", "f", 0, 1, ["-a", "sha3-512", "-H", "0"]),
        ("li-no-leaf", "f", 1, 2, ["-a", "sha3-224", "-H", "0"]),
        ("li-empty", "e", 0, 2, ["-a", "sha3-384", "-H", "1", "-D", "3"]),
        ("kt128-first", "big", 0, 3, ["-a", "kt128", "--customization", "C"]),
        ("kt256-last", "big", 2, 3, ["-a", "kt256"]),
        ("ph128", "f", 1, 2, ["-a", "parallelhash128", "-B", "10", "--customization", "S"]),
        ("ph256", "f", 0, 1, ["-a", "parallelhash256", "-B", "64", "-l", "7"]),
    ]
    for name, file, index, parts, options in cases:
        out = work / f"{name}.part"
        subprocess.run(
            [treehash, "part", *options, "--parts", str(parts), "--index", str(index),
             "-o", out.name, "--no-progress", file],
            cwd=work, check=True,
        )
        part = out.read_bytes()
        write("part_bytes", f"{name}", part)
        write("part_bytes", f"{name}-body", part[:-CHECK_LEN])


def part_set():
    rng = random.Random(31)
    # The first byte picks the parameters (tests/fuzz_properties, small_params):
    # 0-2 LI, 3 keyed LI, 4 KT256, 5 KT128, 6 ParallelHash, 7 TurboSHAKE.
    for kind in range(8):
        for seed in range(3):
            length = rng.choice([40, 200, 700])
            rest = bytes(rng.randrange(256) for _ in range(length))
            write("part_set", f"kind{kind}-{seed}", bytes([kind]) + rest)


def check_lines(treehash, work):
    names = ["plain.iso", "a b", "back\\slash", "new\nline", " lead"]
    for name in names:
        (work / name).write_bytes(b"x" * 50)
    runs = [
        ("plain", []),
        ("tag", ["--tag"]),
        ("tag-li", ["--tag", "-H", "2", "-D", "4", "-B", "16"]),
        ("tag-keyed", ["--tag", "-H", "1", "--prefix-hex", "00"]),
        ("kt128", ["--tag", "-a", "kt128", "--customization", "C"]),
        ("ph256", ["--tag", "-a", "parallelhash256", "-B", "12", "-l", "20"]),
        ("ts128", ["--tag", "-a", "turboshake128", "--domain", "06"]),
        ("zero", ["-z"]),
        ("zero-tag", ["-z", "--tag", "-a", "shake256", "-l", "5"]),
    ]
    for i, (run, options) in enumerate(runs):
        name = names[i % len(names)]
        out = subprocess.run(
            [treehash, *options, "--", name], cwd=work, check=True, capture_output=True
        ).stdout
        end = b"\0" if "-z" in options else b"\n"
        write("check_lines", run, out.removesuffix(end))
    write("check_lines", "binary-mark", b"abcd *file.bin\r")
    write("check_lines", "one-space", b"abcd file.bin")
    write("check_lines", "paren-name", b"SHAKE128 (x (1) = 2.bin) = aa")


def labels():
    for i, label in enumerate([
        "SHA3-256",
        "sha3-224",
        "SHA3-256-LI(H=8,D=4,B=136)",
        "SHAKE128-LI(H=2,D=4,B=168,P)",
        "SHA3-512-LI(H=0,P)",
        "KT128",
        "kt256(C=6162)",
        "ParallelHash128(B=12,S=506172616c6c656c2044617461)",
        "ParallelHash256(B=8192)",
        "TurboSHAKE128(D=1F)",
        "turboshake256(D=06)",
        "parallelhash256",
    ]):
        write("labels", f"label{i}", label.encode())


def main():
    treehash = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target" / "release" / "treehash")
    treehash = str(Path(treehash).resolve())
    with tempfile.TemporaryDirectory() as work:
        part_bytes(treehash, Path(work))
    with tempfile.TemporaryDirectory() as work:
        check_lines(treehash, Path(work))
    part_set()
    labels()


if __name__ == "__main__":
    main()
