#!/usr/bin/env python3
"""Lists of files (issue 22): whole processes next to sha256sum and b3sum.

    bench-lists.py TREEHASH [--dir DIR] [--repeat N] [--b3sum PATH]
                   [--no-big] [--no-gpu] [--big-file PATH]

Makes the lists once under DIR (default /tmp/th-lists): 2000 files of
0-10 KB, 200 of 1-8 MiB, 100,000 of 0-5 bytes and, unless --no-big, 64 of
128 MiB; reads them into the page cache, then times every command of a
block one after the other (median of N runs, default 5, wall time and peak
RSS from wait4, like measure.py) and prints one markdown table. Every ratio
of the docs is taken within this one run. The 100,000-file rows run under
`ulimit -n 256`; `-c` over a million lines checks that list ten times over.
With --big-file (an 8 GiB file), the single-file rates the list targets are
set against are measured too.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time


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


def time_it(command, cwd, repeat, nofile=None, stdout=None):
    """Median wall seconds, every run, and peak RSS in MiB; None if it failed."""

    if nofile:
        # Through a shell, not a preexec_fn: that would make Python fork
        # itself, and wait4 would count its memory as the command's.
        command = ["sh", "-c", f"ulimit -n {nofile} && exec \"$@\"", "sh"] + command
    times, peak = [], 0
    for _ in range(repeat):
        out = open(stdout, "wb") if stdout else subprocess.DEVNULL
        start = time.monotonic()
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.monotonic() - start
        if stdout:
            out.close()
        if os.waitstatus_to_exitcode(status) != 0:
            return None, err.decode(errors="replace").strip().splitlines()[-1:]
        times.append(elapsed)
        peak = max(peak, usage.ru_maxrss)
    return (statistics.median(times), times, peak / 1024), None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("treehash")
    p.add_argument("--dir", default="/tmp/th-lists")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--b3sum", default=shutil.which("b3sum"), type=lambda s: os.path.abspath(s))
    p.add_argument("--no-big", action="store_true")
    p.add_argument("--no-gpu", action="store_true")
    p.add_argument("--big-file")
    a = p.parse_args()
    th = os.path.abspath(a.treehash)
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
    for d in list(lists.values()) + [tiny]:
        warm(d)

    def files(d):
        return sorted(f for f in os.listdir(d) if f.startswith("f"))

    print(f"# Lists of files, {time.strftime('%Y-%m-%d', time.gmtime())}, "
          f"{os.cpu_count()} CPUs; median of {a.repeat}, whole processes, page-cached")
    print()
    print("| list | command | median s | runs | peak RSS MiB |")
    print("|---|---|---:|---|---:|")

    def row(name, label, command, cwd, nofile=None):
        r, err = time_it(command, cwd, a.repeat, nofile)
        if r is None:
            print(f"| {name} | {label} | FAILED {err} | | |")
            return
        median, runs, peak = r
        print(f"| {name} | {label} | {median:.3f} | {' / '.join(f'{t:.3f}' for t in runs)} "
              f"| {peak:.0f} |", flush=True)

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
    name = "100,000 × 0–5 B, ulimit -n 256"
    row(name, "treehash", [th] + fs, tiny, nofile=256)
    row(name, "sha256sum", ["sha256sum"] + fs, tiny, nofile=256)
    if a.b3sum:
        row(name, "b3sum", [a.b3sum] + fs, tiny, nofile=256)
    row(name, "treehash -c, 1,000,000 lines", [th, "-c", "SUMS1M.th"], tiny, nofile=256)
    row(name, "sha256sum -c, 1,000,000 lines", ["sha256sum", "-c", "SUMS1M.sha"], tiny, nofile=256)


if __name__ == "__main__":
    sys.exit(main())
