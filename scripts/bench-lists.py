#!/usr/bin/env python3
"""Lists of files (issue 22): whole processes next to sha256sum and b3sum.

    bench-lists.py TREEHASH [--dir DIR] [--repeat N] [--b3sum PATH]
                   [--no-big] [--no-gpu] [--big-file PATH] [--perm-rate M]
    bench-lists.py --permutations [--dir DIR]

Makes the lists once under DIR (default /tmp/th-lists): 2000 files of
0-10 KB, 200 of 1-8 MiB, 100,000 of 0-5 bytes and, unless --no-big, 64 of
128 MiB; reads them into the page cache, then times every command of a
block one after the other (median of N runs, default 5, wall time and peak
RSS) and prints one markdown table. Every ratio of the docs is taken within
this one run. The 100,000-file rows run under `ulimit -n 256`; `-c` over a
million lines checks that list ten times over. With --big-file (an 8 GiB
file), the single-file rates the list targets are set against are measured
too.

Peak RSS is measured by GNU time where it is installed, else from a
launcher process started before this script reads anything (`Runner`):
Linux starts a child's peak RSS at that of the process it was spawned from
(a vfork child's at its parent's peak), so children of this script, which
reads GiBs, would all report those, as wait4 here once made them do.

Then a table of the permutations each input costs (`permutations()`: the
spec's arithmetic, docs/SPEC.md): every hash costs at least one
Keccak-f[1600] per rate block it absorbs, and a tree more (each leaf's
padding block, the parents), so a list's rate is bounded by the 8 GiB
file's rate times the ratio of their permutations per byte. With
--big-file, the lists' times are set against their permutations at the
8 GiB file's permutation rate in this run; with --perm-rate (the all-core
M states/s per thread of `cargo bench --features measure --bench
permutations`), against the bare kernels' ceiling. --permutations prints
the table alone (no timing), for the lists under DIR.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# SHA3-256-LI, the default function: rate r and chaining value c (bytes).
RATE, CHAIN = 136, 32


def make(root, name, count, lo, hi):
    d = os.path.join(root, name)
    if os.path.isdir(d) and sum(1 for f in os.listdir(d) if f.startswith("f")) == count:
        return d
    os.makedirs(d, exist_ok=True)
    rng = random.Random(22)
    blob = os.urandom(max(hi, 1))
    for i in range(count):
        n = rng.randint(lo, hi)
        with open(os.path.join(d, f"f{i:06d}"), "wb") as f:
            f.write(blob[:n])
    return d


def warm(d):
    for f in os.listdir(d):
        with open(os.path.join(d, f), "rb") as fh:
            while fh.read(1 << 24):
                pass


def sponge_permutations(length, out_len):
    """Keccak-f[1600] calls of a SHA-3 sponge (rate RATE) over `length`
    bytes with `out_len` bytes out: one per whole rate block, one for the
    padded last block (pad10*1 always adds one), one per further rate block
    of output."""
    return length // RATE + 1 + (out_len - 1) // RATE


def permutations(length, height=8, degree=4, block=RATE, prefix=0, out_len=CHAIN):
    """Keccak-f[1600] calls of SHA3-256-LI(H, D, B) over a file of `length`
    bytes (docs/SPEC.md): each leaf that holds a block hashes its bytes,
    then every parent whose subtree holds one (D·c bytes each) and the root.
    Leaves and subtrees that hold no block cost nothing: their values are
    the same for every input, and treehash computes them once per process."""
    message = prefix + length
    if height == 0:
        return sponge_permutations(message, out_len)
    leaves = degree**height
    blocks = -(-message // block)
    holding = min(blocks, leaves)
    if holding == 0:
        # The empty message: the parents of empty subtrees, and the root.
        return sponge_permutations(degree * CHAIN, out_len)
    # Leaf j holds blocks j, j + L, ...: the first `blocks % L` leaves one
    # more than the others; the last block is short by `short` bytes.
    rounds, extra = divmod(blocks, leaves)
    short = blocks * block - message
    perms = extra * sponge_permutations((rounds + 1) * block, CHAIN)
    perms += (holding - extra) * sponge_permutations(rounds * block, CHAIN)
    last = (blocks - 1) // leaves + 1
    perms += sponge_permutations(last * block - short, CHAIN) - sponge_permutations(last * block, CHAIN)
    for level in range(1, height):
        perms += -(-holding // degree**level) * sponge_permutations(degree * CHAIN, CHAIN)
    return perms + sponge_permutations(degree * CHAIN, out_len)


def permutation_rows(cases, big=8 << 30):
    """Rows of the permutations table: for each (name, sizes, height), the
    bytes, the permutations, their number per rate block of input, and the
    bound they put on the list's rate over one big file's at that height."""
    rows = []
    for name, sizes, height in cases:
        total = sum(sizes)
        perms = sum(permutations(n, height) for n in sizes)
        per_block = perms * RATE / max(total, 1)
        big_per_block = permutations(big, height) * RATE / big
        rows.append((name, height, total, perms, per_block, big_per_block / per_block))
    return rows


def gnu_time():
    """The path of GNU time, if it is there and answers `-f %M`."""
    path = shutil.which("time")
    if not path:
        return None
    try:
        r = subprocess.run([path, "-f", "%M", "true"], capture_output=True, text=True, timeout=10)
        int(r.stderr.strip().splitlines()[-1])
        return path
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


class Runner:
    """Runs commands, each run's wall seconds, exit code, peak RSS (KiB)
    and last line of standard error (see the module doc). Through GNU time
    where it is installed: its child's peak is the command's own (GNU time
    reports it from wait4, and its own few MiB are all the child starts
    from); else from a launcher process of its own, whose own peak (a few
    tens of MiB: Python, and the longest argument list so far) each run
    reports as its floor."""

    def __init__(self):
        self.time = gnu_time()
        self.launcher = None
        if not self.time:
            self.launcher = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--launcher"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def describe(self):
        if self.time:
            return (f"Peak RSS by GNU time ({self.time}): the command's own (GNU time's start "
                    "is in every run's wall time too, about a millisecond).")
        return ("Peak RSS from wait4 in a launcher process of its own (no GNU time here): "
                "a run whose peak is at most the launcher's own is shown as ≤ that floor.")

    def run(self, command, cwd, stdout=None):
        if self.launcher:
            self.launcher.stdin.write(json.dumps({"argv": command, "cwd": cwd, "stdout": stdout}) + "\n")
            self.launcher.stdin.flush()
            return json.loads(self.launcher.stdout.readline())
        with tempfile.NamedTemporaryFile("r", prefix="bench-lists-rss-") as rss:
            r = launch([self.time, "-f", "%M", "-o", rss.name] + command, cwd, stdout)
            r["maxrss_kib"] = int(rss.read().split()[-1])
        return r


def launch(command, cwd, stdout):
    """Runs `command`: its wall seconds, exit code, wait4's ru_maxrss, this
    process's own peak RSS (the floor of the command's), and standard
    error's last line."""
    import resource

    out = open(stdout, "wb") if stdout else subprocess.DEVNULL
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.monotonic() - start
    if stdout:
        out.close()
    lines = err.decode(errors="replace").strip().splitlines()
    return {"seconds": elapsed, "code": os.waitstatus_to_exitcode(status),
            "maxrss_kib": usage.ru_maxrss, "floor_kib": floor, "err": lines[-1:]}


def serve_launches():
    """The launcher: one command a line of standard input, one result a line out."""
    for line in sys.stdin:
        req = json.loads(line)
        print(json.dumps(launch(req["argv"], req["cwd"], req["stdout"])), flush=True)


def time_it(runner, command, cwd, repeat, nofile=None, stdout=None):
    """Median wall seconds, every run, and the peak RSS in MiB as text;
    None if it failed."""

    if nofile:
        command = ["sh", "-c", f"ulimit -n {nofile} && exec \"$@\"", "sh"] + command
    times, peak, floor = [], 0, 0
    for _ in range(repeat):
        r = runner.run(command, cwd, stdout)
        if r["code"] != 0:
            return None, r["err"]
        times.append(r["seconds"])
        peak = max(peak, r["maxrss_kib"])
        floor = max(floor, r.get("floor_kib") or 0) if runner.launcher else 0
    rss = f"≤ {floor / 1024:.0f}" if peak <= floor else f"{peak / 1024:.0f}"
    return (statistics.median(times), times, rss), None


def main():
    if sys.argv[1:2] == ["--launcher"]:
        return serve_launches()
    # Before anything is read (see the module doc).
    runner = Runner()
    p = argparse.ArgumentParser()
    p.add_argument("treehash", nargs="?")
    p.add_argument("--dir", default="/tmp/th-lists")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--b3sum", default=shutil.which("b3sum"), type=lambda s: os.path.abspath(s))
    p.add_argument("--no-big", action="store_true")
    p.add_argument("--no-gpu", action="store_true")
    p.add_argument("--big-file")
    p.add_argument("--perm-rate", type=float,
                   help="all-core M states/s per thread of benches/permutations.rs")
    p.add_argument("--permutations", action="store_true",
                   help="print the permutations table alone, for the lists under --dir")
    a = p.parse_args()
    if not a.permutations and not a.treehash:
        p.error("TREEHASH is needed (or --permutations)")
    os.makedirs(a.dir, exist_ok=True)
    lists = {
        "2000 × 0–10 KB": make(a.dir, "small", 2000, 0, 10_000),
        "200 × 1–8 MiB": make(a.dir, "mid", 200, 1 << 20, 8 << 20),
    }
    if not a.no_big:
        d = os.path.join(a.dir, "big")
        if not os.path.isfile(os.path.join(d, "f000063")):
            os.makedirs(d, exist_ok=True)
            block = os.urandom(128 << 20)
            for i in range(64):
                with open(os.path.join(d, f"f{i:06d}"), "wb") as f:
                    f.write(block)
        lists["64 × 128 MiB"] = d
    tiny = make(a.dir, "tiny", 100_000, 0, 5)

    def files(d):
        return sorted(f for f in os.listdir(d) if f.startswith("f"))

    def sizes(d):
        return [os.path.getsize(os.path.join(d, f)) for f in files(d)]

    tiny_name = "100,000 × 0–5 B, ulimit -n 256"
    if a.permutations:
        print_permutations(a, lists, tiny, tiny_name, sizes, {})
        return
    th = os.path.abspath(a.treehash)
    for d in list(lists.values()) + [tiny]:
        warm(d)

    print(f"# Lists of files, {time.strftime('%Y-%m-%d', time.gmtime())}, "
          f"{os.cpu_count()} CPUs; median of {a.repeat}, whole processes, page-cached")
    print()
    print(runner.describe())
    print()
    print("| list | command | median s | runs | peak RSS MiB |")
    print("|---|---|---:|---|---:|")
    medians = {}

    def row(name, label, command, cwd, nofile=None):
        r, err = time_it(runner, command, cwd, a.repeat, nofile)
        if r is None:
            print(f"| {name} | {label} | FAILED {err} | | |")
            return
        median, runs, rss = r
        medians[name, label] = median
        print(f"| {name} | {label} | {median:.3f} | {' / '.join(f'{t:.3f}' for t in runs)} "
              f"| {rss} |", flush=True)

    backends = ["cpu"] + ([] if a.no_gpu else ["gpu"])
    for name, d in lists.items():
        fs = files(d)
        # The check lists, made by the tools themselves.
        for sums, cmd in [("SUMS.th", [th, "--backend", "cpu"]), ("SUMS.h0", [th, "--backend", "cpu", "-H", "0"]),
                          ("SUMS.sha", ["sha256sum"])]:
            with open(os.path.join(d, sums), "wb") as out:
                subprocess.run(cmd + fs, cwd=d, stdout=out, check=True)
        row(name, "treehash (auto, H=8)", [th] + fs, d)
        for b in backends:
            row(name, f"treehash --backend {b}", [th, "--backend", b] + fs, d)
        row(name, "treehash -H 0", [th, "-H", "0"] + fs, d)
        row(name, "sha256sum", ["sha256sum"] + fs, d)
        if a.b3sum:
            row(name, "b3sum", [a.b3sum] + fs, d)
        row(name, "treehash -c (H=8)", [th, "-c", "SUMS.th"], d)
        row(name, "treehash -c (H=0)", [th, "-H", "0", "-c", "SUMS.h0"], d)
        row(name, "sha256sum -c", ["sha256sum", "-c", "SUMS.sha"], d)
    if a.big_file:
        big = os.path.abspath(a.big_file)
        for b in backends:
            row("one 8 GiB file", f"treehash --backend {b}", [th, "--backend", b, big], "/")
        row("one 8 GiB file", "treehash (auto)", [th, big], "/")
        one_gib = os.path.join(a.dir, "one-gib.bin")
        if not os.path.isfile(one_gib):
            with open(big, "rb") as src, open(one_gib, "wb") as dst:
                dst.write(src.read(1 << 30))
        row("one 1 GiB file", "treehash -H 0", [th, "--backend", "cpu", "-H", "0", one_gib], "/")
    fs = files(tiny)
    with open(os.path.join(tiny, "SUMS.th"), "wb") as out:
        subprocess.run([th, "--backend", "cpu"] + fs, cwd=tiny, stdout=out, check=True)
    with open(os.path.join(tiny, "SUMS.sha"), "wb") as out:
        subprocess.run(["sha256sum"] + fs, cwd=tiny, stdout=out, check=True)
    for src, dst in [("SUMS.th", "SUMS1M.th"), ("SUMS.sha", "SUMS1M.sha")]:
        with open(os.path.join(tiny, src), "rb") as f:
            text = f.read()
        with open(os.path.join(tiny, dst), "wb") as f:
            f.write(text * 10)
    name = tiny_name
    row(name, "treehash", [th] + fs, tiny, nofile=256)
    row(name, "sha256sum", ["sha256sum"] + fs, tiny, nofile=256)
    if a.b3sum:
        row(name, "b3sum", [a.b3sum] + fs, tiny, nofile=256)
    row(name, "treehash -c, 1,000,000 lines", [th, "-c", "SUMS1M.th"], tiny, nofile=256)
    row(name, "sha256sum -c, 1,000,000 lines", ["sha256sum", "-c", "SUMS1M.sha"], tiny, nofile=256)
    print()
    print_permutations(a, lists, tiny, tiny_name, sizes, medians)


def print_permutations(a, lists, tiny, tiny_name, sizes, medians):
    """The permutations table (see the module doc), with the bounds on time
    where this run measured what they need."""
    # The big file's own size where one was timed (its permutations set the rate).
    big = os.path.getsize(a.big_file) if a.big_file else 8 << 30
    # Each input, H, and the row of the timing table that measured it.
    cases = [(name, sizes(d), h, label) for name, d in lists.items()
             for h, label in ((8, "treehash --backend cpu"), (0, "treehash -H 0"))]
    cases.append((tiny_name, sizes(tiny), 8, "treehash"))
    singles = [("one 8 GiB file", [big], 8, "treehash --backend cpu"),
               ("one 1 GiB file", [1 << 30], 0, "treehash -H 0")]
    cores = os.cpu_count()
    # Keccak-f calls a second on the whole machine: the 8 GiB file's at
    # H = 8 (every core); at H = 0 (one sponge) the 1 GiB file's on one
    # core, times the cores that a list's inputs share.
    rates = {}
    for name, [size], height, label in singles:
        t = medians.get((name, label))
        if t:
            rates[height] = permutations(size, height) / t * (cores if height == 0 else 1)
    print("Keccak-f[1600] calls (the spec's arithmetic, SHA3-256-LI, D = 4, B = 136; "
          "empty subtrees cost nothing). Bound: the highest rate the list can have "
          "next to the single file at the same H, at the same permutations a second.")
    if rates:
        print("Bound s: the list's calls at the rate the single file reached in this run "
              "(H = 8: the 8 GiB file on every core; H = 0: the 1 GiB file on one core, "
              f"times {cores} cores).")
    if a.perm_rate:
        print(f"Kernel s: the list's calls at {a.perm_rate} M states/s per thread on "
              f"{cores} threads (bare eight-lane kernel; H ≥ 1 only).")
    print()
    print("| input | H | bytes | calls | per 136-byte block | bound: × the single file's rate "
          "| measured s | bound s | measured ÷ bound | kernel s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    cell = lambda v, f: f.format(v) if v is not None else "–"
    for (name, height, total, perms, per_block, bound), (_, _, _, label) in zip(
            permutation_rows([c[:3] for c in cases + singles], big), cases + singles):
        single = (name, [total], height, label) in singles
        t = medians.get((name, label))
        b = perms / rates[height] if height in rates and not single else None
        k = perms / (cores * a.perm_rate * 1e6) if a.perm_rate and height > 0 else None
        print(f"| {name} | {height} | {total} | {perms} | {per_block:.3f} | {bound:.2f} "
              f"| {cell(t, '{:.3f}')} | {cell(b, '{:.3f}')} "
              f"| {cell(t / b if t and b else None, '{:.2f}')} | {cell(k, '{:.3f}')} |")


if __name__ == "__main__":
    sys.exit(main())
